package upstream

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcptrunk/mcptrunk/internal/config"
)

// TestInvalidEntryFailsOnlyItsServer: a server whose config entry cannot be
// used (an unset variable) is failed from the start, named in StartAll's
// error, Failures, its status, the log and the error of a call to it,
// while the others serve; it is never started.
func TestInvalidEntryFailsOnlyItsServer(t *testing.T) {
	h := newHarness(t)
	host := h.host(nil)
	cfg, err := config.Parse(strings.NewReader(`{"mcpServers": {
		"gh": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${MCPTRUNK_TEST_UNSET_TOKEN}"}},
		"off": {"command": "${MCPTRUNK_TEST_UNSET_CMD}", "disabled": true}
	}}`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	specs := append(cfg.Servers, h.spec("good", modeNormal))
	const why = `headers.Authorization: variable "MCPTRUNK_TEST_UNSET_TOKEN" is not set`

	err = host.StartAll(ctxFor(t), specs)
	if err == nil || !strings.Contains(err.Error(), `server "gh": config entry: `+why) {
		t.Errorf("StartAll error %v, want one naming gh and %s", err, why)
	}
	if f := host.Failures(); len(f) != 1 || f[0].Server != "gh" || !strings.Contains(f[0].Err.Error(), why) {
		t.Errorf("Failures() = %v, want gh alone, failing with %s", f, why)
	}
	good, _ := host.Client("good")
	if state, err := good.State(); state != StateReady {
		t.Errorf("good: %s (%v), want ready", state, err)
	}
	off, _ := host.Client("off")
	if state, _ := off.State(); state != StateDisabled {
		t.Errorf("off: %s, want disabled (a disabled entry is not started, usable or not)", state)
	}
	gh, _ := host.Client("gh")
	if st := gh.Status(); st.State != StateFailed || !strings.Contains(st.Error, why) {
		t.Errorf("gh status %+v, want failed with %s", st, why)
	}
	_, err = gh.Call(ctxFor(t), "tools/list", nil)
	if err == nil || !strings.Contains(err.Error(), `server "gh" is not available: config entry: `+why) {
		t.Errorf("a call to gh: %v, want one naming the server, the field and the variable", err)
	}
	if err := gh.Wake(ctxFor(t)); err == nil {
		t.Error("Wake started a server whose entry cannot be used")
	}
	if !strings.Contains(h.log.String(), "MCPTRUNK_TEST_UNSET_TOKEN") {
		t.Errorf("the log does not name the variable:\n%s", h.log.String())
	}

	// Add (a reload) treats it the same.
	bad := cfg.Servers[0]
	bad.Name = "gh2"
	if err := host.Add(ctxFor(t), bad); err == nil || !errors.As(err, new(*config.EntryError)) {
		t.Errorf("Add of an unusable entry: %v, want its EntryError", err)
	}
}
