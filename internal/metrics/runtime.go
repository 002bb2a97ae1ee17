package metrics

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The Go runtime's own metrics, under the names (and with the meaning)
// Prometheus' Go client gives them, read from runtime/metrics at each
// scrape: what dashboards built for any Go program expect.

// runtimeGauge is a go_* family that is a sum of runtime/metrics values.
type runtimeGauge struct {
	name, typ, help string
	samples         []string
}

var runtimeGauges = []runtimeGauge{
	{"go_gc_gogc_percent", "gauge", "Heap size target percentage configured by the user, otherwise 100.", []string{"/gc/gogc:percent"}},
	{"go_gc_gomemlimit_bytes", "gauge", "Go runtime memory limit configured by the user, otherwise math.MaxInt64.", []string{"/gc/gomemlimit:bytes"}},
	{"go_goroutines", "gauge", "Number of goroutines that currently exist.", []string{"/sched/goroutines:goroutines"}},
	{"go_memstats_alloc_bytes", "gauge", "Number of bytes allocated in heap and currently in use.", []string{"/memory/classes/heap/objects:bytes"}},
	{"go_memstats_alloc_bytes_total", "counter", "Total number of bytes allocated in heap until now, even if released already.", []string{"/gc/heap/allocs:bytes"}},
	{"go_memstats_buck_hash_sys_bytes", "gauge", "Number of bytes used by the profiling bucket hash table.", []string{"/memory/classes/profiling/buckets:bytes"}},
	{"go_memstats_frees_total", "counter", "Total number of heap objects frees.", []string{"/gc/heap/frees:objects", "/gc/heap/tiny/allocs:objects"}},
	{"go_memstats_gc_sys_bytes", "gauge", "Number of bytes used for garbage collection system metadata.", []string{"/memory/classes/metadata/other:bytes"}},
	{"go_memstats_heap_alloc_bytes", "gauge", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes.", []string{"/memory/classes/heap/objects:bytes"}},
	{"go_memstats_heap_idle_bytes", "gauge", "Number of heap bytes waiting to be used.", []string{"/memory/classes/heap/released:bytes", "/memory/classes/heap/free:bytes"}},
	{"go_memstats_heap_inuse_bytes", "gauge", "Number of heap bytes that are in use.", []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes"}},
	{"go_memstats_heap_objects", "gauge", "Number of currently allocated objects.", []string{"/gc/heap/objects:objects"}},
	{"go_memstats_heap_released_bytes", "gauge", "Number of heap bytes released to OS.", []string{"/memory/classes/heap/released:bytes"}},
	{"go_memstats_heap_sys_bytes", "gauge", "Number of heap bytes obtained from system.", []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes", "/memory/classes/heap/released:bytes", "/memory/classes/heap/free:bytes"}},
	{"go_memstats_mallocs_total", "counter", "Total number of heap objects allocated, both live and gc-ed.", []string{"/gc/heap/allocs:objects", "/gc/heap/tiny/allocs:objects"}},
	{"go_memstats_mcache_inuse_bytes", "gauge", "Number of bytes in use by mcache structures.", []string{"/memory/classes/metadata/mcache/inuse:bytes"}},
	{"go_memstats_mcache_sys_bytes", "gauge", "Number of bytes used for mcache structures obtained from system.", []string{"/memory/classes/metadata/mcache/inuse:bytes", "/memory/classes/metadata/mcache/free:bytes"}},
	{"go_memstats_mspan_inuse_bytes", "gauge", "Number of bytes in use by mspan structures.", []string{"/memory/classes/metadata/mspan/inuse:bytes"}},
	{"go_memstats_mspan_sys_bytes", "gauge", "Number of bytes used for mspan structures obtained from system.", []string{"/memory/classes/metadata/mspan/inuse:bytes", "/memory/classes/metadata/mspan/free:bytes"}},
	{"go_memstats_next_gc_bytes", "gauge", "Number of heap bytes when next garbage collection will take place.", []string{"/gc/heap/goal:bytes"}},
	{"go_memstats_other_sys_bytes", "gauge", "Number of bytes used for other system allocations.", []string{"/memory/classes/other:bytes"}},
	{"go_memstats_stack_inuse_bytes", "gauge", "Number of bytes obtained from system for stack allocator in non-CGO environments.", []string{"/memory/classes/heap/stacks:bytes"}},
	{"go_memstats_stack_sys_bytes", "gauge", "Number of bytes obtained from system for stack allocator.", []string{"/memory/classes/heap/stacks:bytes", "/memory/classes/os-stacks:bytes"}},
	{"go_memstats_sys_bytes", "gauge", "Number of bytes obtained from system.", []string{"/memory/classes/total:bytes"}},
	{"go_sched_gomaxprocs_threads", "gauge", "The current runtime.GOMAXPROCS setting.", []string{"/sched/gomaxprocs:threads"}},
}

// runtimeFamilies reads the go_* families now.
func runtimeFamilies() []family {
	index := map[string]int{}
	var samples []metrics.Sample
	for _, g := range runtimeGauges {
		for _, name := range g.samples {
			if _, ok := index[name]; !ok {
				index[name] = len(samples)
				samples = append(samples, metrics.Sample{Name: name})
			}
		}
	}
	metrics.Read(samples)
	fams := make([]family, 0, len(runtimeGauges)+4)
	for _, g := range runtimeGauges {
		var v float64
		for _, name := range g.samples {
			switch s := samples[index[name]].Value; s.Kind() {
			case metrics.KindUint64:
				v += float64(s.Uint64())
			case metrics.KindFloat64:
				v += s.Float64()
			default:
				// A metric this Go does not have: the family is left out.
				v = -1
			}
		}
		if v >= 0 {
			fams = append(fams, gaugeFamily(g.name, g.typ, g.help, v))
		}
	}
	threads, _ := runtime.ThreadCreateProfile(nil)
	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	pauses := family{name: "go_gc_duration_seconds", typ: "summary",
		help: "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles."}
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		pauses.series = append(pauses.series, series{labels: `{quantile="` + q + `"}`, value: gc.PauseQuantiles[i].Seconds()})
	}
	pauses.series = append(pauses.series, series{suffix: "_sum", value: gc.PauseTotal.Seconds()},
		series{suffix: "_count", value: float64(gc.NumGC)})
	var lastGC float64
	if !gc.LastGC.IsZero() {
		lastGC = float64(gc.LastGC.UnixNano()) / 1e9
	}
	return append(fams, pauses,
		gaugeFamily("go_threads", "gauge", "Number of OS threads created.", float64(threads)),
		gaugeFamily("go_memstats_last_gc_time_seconds", "gauge", "Number of seconds since 1970 of last garbage collection.", lastGC),
		family{name: "go_info", typ: "gauge", help: "Information about the Go environment.",
			series: []series{{labels: `{version="` + runtime.Version() + `"}`, value: 1}}})
}

// gaugeFamily is a family of one series without labels.
func gaugeFamily(name, typ, help string, v float64) family {
	return family{name: name, typ: typ, help: help, series: []series{{value: v}}}
}
