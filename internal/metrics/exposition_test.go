package metrics

import (
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/proxy/observe"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The Go runtime's and the process's metrics are there under the names
// Prometheus' Go client gives them, with values that make sense.
func TestRuntimeAndProcessMetrics(t *testing.T) {
	fams := scrape(t, newTest(t))
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "go_memstats_sys_bytes", "go_memstats_heap_objects",
		"go_memstats_mallocs_total", "go_sched_gomaxprocs_threads", "go_threads", "go_gc_gogc_percent"} {
		if v, ok := value(fams, name, map[string]string{}); !ok || v <= 0 {
			t.Errorf("%s = %v (present %v), want > 0", name, v, ok)
		}
	}
	if v, _ := value(fams, "go_info", map[string]string{"version": runtime.Version()}); v != 1 {
		t.Errorf("go_info{version=%q} = %v", runtime.Version(), v)
	}
	if f := fams["go_gc_duration_seconds"]; f == nil || f.Metric[0].Summary == nil || len(f.Metric[0].Summary.Quantile) != 5 {
		t.Errorf("go_gc_duration_seconds: %v", f)
	}
	if runtime.GOOS != "linux" {
		return
	}
	for _, name := range []string{"process_resident_memory_bytes", "process_virtual_memory_bytes", "process_open_fds", "process_max_fds"} {
		if v, ok := value(fams, name, map[string]string{}); !ok || v <= 0 {
			t.Errorf("%s = %v (present %v), want > 0", name, v, ok)
		}
	}
	start, _ := value(fams, "process_start_time_seconds", map[string]string{})
	// btime is in whole seconds: the start can seem up to a second late.
	if now := float64(time.Now().Unix()); start > now+2 || start < now-3600 {
		t.Errorf("process_start_time_seconds = %v, not within the hour up to %v", start, now)
	}
	if _, ok := value(fams, "process_cpu_seconds_total", map[string]string{}); !ok {
		t.Error("no process_cpu_seconds_total")
	}
}

// A label value with the characters the format escapes arrives as it was.
func TestLabelEscaping(t *testing.T) {
	m := newTest(t)
	server := "we\"ird\\name\nhere"
	request(m, observe.Request{Method: "tools/list", Server: server}, `{}`, nil)
	labels := map[string]string{"server": server, "method": "tools/list", "item": "", "outcome": "ok"}
	if v, ok := value(scrape(t, m), "mcptrunk_requests_total", labels); !ok || v != 1 {
		t.Errorf("the request of server %q: %v (present %v)", server, v, ok)
	}
}

// A scraper that takes gzip gets the exposition gzipped.
func TestScrapeGzip(t *testing.T) {
	m := newTest(t)
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip, deflate")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, req)
	if rec.Header().Get("Content-Encoding") != "gzip" || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("headers %v", rec.Header())
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(zr)
	if err != nil || fams["go_goroutines"] == nil {
		t.Errorf("the gzipped exposition: %v, %d families", err, len(fams))
	}
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{"": false, "gzip": true, "deflate, gzip;q=0.5": true, "gzip;q=0": false, "identity": false} {
		if got := acceptsGzip(h); got != want {
			t.Errorf("acceptsGzip(%q) = %v", h, got)
		}
	}
}
