package statuspage

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/wording"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// view is what the template renders: every value already formatted, so the
// template holds layout only.
type view struct {
	Generated string
	Version   string
	Trunk     []field
	Servers   []serverView
	Summary   string
}

// field is one labelled value; a Wide one (a sentence rather than a word)
// takes a whole row of the grid.
type field struct {
	Label, Value string
	Wide         bool
}

type serverView struct {
	Name, State, Class string
	// Apps is the number of MCP Apps (ui:// resources) the server ships,
	// shown as a badge beside its state.
	Apps              int
	Fields            []field
	Error, StderrTail string
}

// stderrMarker is how the stdio transport appends the last lines a server
// wrote to stderr to the error that ended it; the page shows them apart.
const stderrMarker = "; last stderr: "

func newView(s Snapshot, now time.Time, callRates map[string]float64) view {
	v := view{Generated: now.UTC().Format(time.RFC3339), Version: s.Version}
	pin := cmp.Or(s.PinMode, "off")
	var drift, withheld, findings int
	for _, p := range s.Pins {
		drift, withheld, findings = drift+p.Drift, withheld+p.Withheld, findings+p.Findings
	}
	v.Trunk = []field{
		{"max message", bytesText(s.MaxMessageBytes), false},
		{"dropped notifications", fmt.Sprint(s.DroppedNotifications), false},
		{"parked calls", fmt.Sprint(s.ParkedCalls), false},
		{"host sessions", fmt.Sprint(s.Sessions), false},
		{"pinning", fmt.Sprintf("%s: %d drifted, %d withheld, %d findings", pin, drift, withheld, findings), false},
	}
	if len(s.Profiles) > 0 {
		var names []string
		for _, name := range slices.Sorted(maps.Keys(s.Profiles)) {
			names = append(names, strings.TrimSuffix(name+" ("+s.Profiles[name]+")", " ()"))
		}
		v.Trunk = append(v.Trunk, field{"profiles", strings.Join(names, ", "), false})
	}
	if st := s.Store; st != nil {
		health := "up"
		if !st.Up {
			health = "DOWN: " + st.Error
		}
		if !st.Since.IsZero() {
			health += " (since " + st.Since.UTC().Format(time.RFC3339) + ")"
		}
		v.Trunk = append(v.Trunk, field{"state store", fmt.Sprintf("%s %s: %s", st.Kind, st.Where, health), true})
	}
	servers := slices.Clone(s.Servers)
	slices.SortFunc(servers, func(a, b upstream.Status) int { return strings.Compare(a.Server, b.Server) })
	counts := map[upstream.State]int{}
	for _, st := range servers {
		counts[st.State]++
		v.Servers = append(v.Servers, serverOf(st, s.Pins[st.Server], callRates[st.Server], now))
	}
	var parts []string
	for _, state := range []upstream.State{upstream.StateReady, upstream.StateStarting, upstream.StateSleeping,
		upstream.StateRestarting, upstream.StateFailed, upstream.StateDisabled, upstream.StateClosed} {
		if n := counts[state]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, state))
		}
	}
	v.Summary = wording.Count(len(servers), "server", "servers")
	if len(parts) > 0 {
		v.Summary += ": " + strings.Join(parts, ", ")
	}
	return v
}

func serverOf(st upstream.Status, pin PinCounts, rate float64, now time.Time) serverView {
	sv := serverView{Name: st.Server, State: string(st.State), Class: stateClass(st.State), Apps: st.Apps}
	add := func(label, value string) { sv.Fields = append(sv.Fields, field{label, value, false}) }
	wide := func(label, value string) { sv.Fields = append(sv.Fields, field{label, value, true}) }
	add("transport", string(st.Transport))
	if st.Protocol != "" {
		add("protocol", st.Protocol)
	}
	if name := serverName(st.ServerInfo); name != "" {
		add("server", name)
	}
	if st.State == upstream.StateReady {
		add("uptime", durationText(time.Duration(st.UptimeSeconds*float64(time.Second))))
	} else if !st.Since.IsZero() {
		add("since", durationText(now.Sub(st.Since))+" ago")
	}
	add("restarts", fmt.Sprint(st.Restarts))
	if st.Tasks > 0 {
		add("tasks running", fmt.Sprint(st.Tasks)) // most servers run none
	}
	if st.Lazy || st.IdleTimeout != "" || st.LazyStarts > 0 || st.IdleStops > 0 {
		add("lazy starts", fmt.Sprint(st.LazyStarts))
		add("idle stops", fmt.Sprint(st.IdleStops))
	}
	catalog := []string{wording.Count(st.Tools, "tool", "tools"), wording.Count(st.Prompts, "prompt", "prompts"),
		wording.Count(st.Resources, "resource", "resources"), wording.Count(st.Templates, "template", "templates")}
	if st.Apps > 0 {
		catalog = append(catalog, wording.Count(st.Apps, "MCP App", "MCP Apps"))
	}
	wide("catalog", strings.Join(catalog, ", "))
	calls := fmt.Sprintf("%d (%s)", st.Calls, wording.Count(st.CallErrors, "error", "errors"))
	if st.Calls > 0 {
		calls += fmt.Sprintf(", mean %.1f ms", st.MeanCallMillis)
	}
	wide("calls", calls+fmt.Sprintf(", %.2f/s now", rate))
	if p := st.Protection(); p != "" {
		wide("protection", p)
	}
	if pin != (PinCounts{}) {
		wide("pinning", fmt.Sprintf("%d drifted, %d withheld, %s", pin.Drift, pin.Withheld, wording.Count(pin.Findings, "finding", "findings")))
	}
	if st.Lazy {
		lazy := "starts on demand"
		if st.IdleTimeout != "" {
			lazy += ", idle stop after " + st.IdleTimeout
		}
		switch {
		case st.State == upstream.StateReady:
			// Listed by the running server, however old the cache
			// entry it matches.
			lazy += ", catalog live"
		case !st.CachedAt.IsZero():
			lazy += ", catalog cached " + durationText(now.Sub(st.CachedAt)) + " ago"
		}
		if !st.LastUse.IsZero() {
			lazy += ", last used " + durationText(now.Sub(st.LastUse)) + " ago"
		}
		wide("lazy", lazy)
	}
	sv.Error = st.Error
	if before, tail, ok := strings.Cut(st.Error, stderrMarker); ok {
		sv.Error, sv.StderrTail = before, tail
	}
	return sv
}

// stateClass picks the colour of a state: good, waiting or bad.
func stateClass(s upstream.State) string {
	switch s {
	case upstream.StateReady:
		return "ok"
	case upstream.StateStarting, upstream.StateSleeping, upstream.StateRestarting:
		return "wait"
	case upstream.StateFailed:
		return "bad"
	}
	return "off"
}

// serverName is serverInfo's name and version, when the server sent them.
func serverName(info json.RawMessage) string {
	var si struct{ Name, Version string }
	if len(info) == 0 || json.Unmarshal(info, &si) != nil {
		return ""
	}
	return strings.TrimSpace(si.Name + " " + si.Version)
}

func durationText(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func bytesText(n int) string {
	switch {
	case n <= 0:
		return "not set"
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB (%d bytes)", float64(n)/(1<<20), n)
	}
	return fmt.Sprintf("%d bytes", n)
}
