package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/jsonrpc"
	"github.com/mcptrunk/mcptrunk/internal/testkit/memserver"
)

// memSpec is a server reached through Options.Dial: no command runs.
func memSpec(name string) config.Spec {
	return config.Spec{
		Name:            name,
		Type:            config.TransportStdio,
		Command:         "not-run",
		ProtocolVersion: "2025-11-25",
		Timeouts: config.Timeouts{
			Connect: config.Duration(10 * time.Second),
			List:    config.Duration(10 * time.Second),
			Call:    config.Duration(10 * time.Second),
		},
	}
}

// memDial is Options.Dial for a set of in-memory servers.
func memDial(set memserver.Set) Dialer {
	return func(spec config.Spec, h jsonrpc.Handler) (Transport, error) { return set.Dial(spec, h) }
}

// A server given through Options.Dial goes through the whole Client: the
// handshake, the lists, a call whose server asks the client something on
// the way (Events.Request), and a restart when its connection ends.
func TestDialSeam(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv := &memserver.Server{Tools: []json.RawMessage{memserver.Tool("ask", "asks the client")}}
	srv.Handle = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method != "tools/call" {
			return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "no %s", method)
		}
		answer, err := srv.Conn().Call(ctx, "sampling/createMessage", json.RawMessage(`{"messages":[]}`))
		if err != nil {
			return nil, err
		}
		return answer, nil
	}
	changed := make(chan struct{}, 16)
	fleet := NewFleet(&Options{
		Dial:     memDial(memserver.Set{"mem": srv}),
		CacheDir: t.TempDir(),
		Restart:  RestartPolicy{MaxAttempts: 3, Backoff: time.Millisecond, MaxBackoff: time.Millisecond, Stable: time.Minute},
		Events: Events{
			Changed: func(string) {
				select {
				case changed <- struct{}{}:
				default:
				}
			},
			Request: func(ctx context.Context, server, method string, params json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(`{"server":"` + server + `","method":"` + method + `"}`), nil
			},
		},
	})
	defer fleet.Close(context.Background())
	if err := fleet.StartAll(ctx, []config.Spec{memSpec("mem")}); err != nil {
		t.Fatal(err)
	}
	c, _ := fleet.Client("mem")
	if tools := c.Catalog().Tools; len(tools) != 1 || tools[0].Key != "ask" {
		t.Fatalf("tools: %+v", tools)
	}
	got, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"ask","arguments":{}}`))
	if err != nil || string(got) != `{"server":"mem","method":"sampling/createMessage"}` {
		t.Fatalf("tools/call: %s, %v", got, err)
	}
	if r := srv.Received(); !slices.Equal(r[:2], []string{"initialize", "notifications/initialized"}) {
		t.Errorf("the server received %q, want the handshake first", r)
	}

	// The server's end goes away: the supervisor dials again.
	_ = srv.Conn().Close(ctx)
	for srv.Dials() < 2 || !ready(c) {
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("no restart: %d dials, state %v", srv.Dials(), c.Status().State)
		}
	}
	if _, err := c.Call(ctx, "tools/call", json.RawMessage(`{"name":"ask","arguments":{}}`)); err != nil {
		t.Errorf("a call after the restart: %v", err)
	}
	if _, err := c.Call(ctx, "nothing/here", nil); !errors.As(err, new(*jsonrpc.Error)) {
		t.Errorf("an unknown method: %v, want the server's error as is", err)
	}
}

func ready(c *Client) bool {
	state, _ := c.State()
	return state == StateReady
}
