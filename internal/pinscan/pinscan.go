// Package pinscan is what `mcptrunk pin` does around its question: connect
// the servers chosen, read what each exports now (its four lists, the
// HTML of its MCP Apps and its skills), compare that with the lockfile, print the drift,
// and record it once the user agrees. It runs the servers itself, with no
// trunk and no host, so it is a sibling of internal/pin (which does no I/O
// but the lockfile's) rather than part of it. The command keeps its flags,
// the question and the exit codes.
package pinscan

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/pin"
	"github.com/mcptrunk/mcptrunk/internal/textview"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// Options are how the servers are started.
type Options struct {
	Logger  *slog.Logger
	Version string // mcptrunk's, sent to the servers as the client's
	// Capabilities are the host capabilities the servers are told of:
	// the command passes what serve --http tells them (see Run).
	Capabilities json.RawMessage
	// Dial and CacheDir are upstream.Options' (nil and "": the transport
	// the spec says, the usual cache); tests run servers in their own
	// process with them.
	Dial     upstream.Dialer
	CacheDir string
}

// Result is what the scan found of one selected server.
type Result struct {
	ID      string // the server's identifier, its key in the lockfile (its config name when it has none)
	State   upstream.State
	Err     error // why it is not ready, when it is not
	Now     pin.Server
	Changes []pin.Change // from what the lockfile holds; nil for a server not ready
}

// Scan is the outcome of Run: a result per selected server, sorted by
// identifier, and per server the names of other servers' tools its
// descriptions should not mention.
type Scan struct {
	Results []Result
	Others  map[string][]string
}

// Run starts the selected servers (no restarts), waits until each has
// listed everything it offers or failed, and compares each ready one with
// lock. Others holds the tools of the servers connected, and for the
// config's other servers those pinned.
//
// The servers are told opts.Capabilities with a 2025 revision first, as
// serve --http tells them: many offer some tools only to a host that can
// sample or elicit, and what is pinned is what hosts are offered, the same
// as serve records on first sight. (Tools offered only to a host that
// declares roots are not: a shared trunk never declares a host's roots.)
func Run(ctx context.Context, cfg *config.Config, specs []config.Spec, lock *pin.Lock, opts Options) (*Scan, error) {
	fleet := upstream.NewFleet(&upstream.Options{Logger: opts.Logger, Concurrency: cfg.Trunk.Concurrency, Version: opts.Version,
		Capabilities: opts.Capabilities, Prefer2025: true, Dial: opts.Dial, CacheDir: opts.CacheDir})
	defer fleet.Close(context.WithoutCancel(ctx))
	_ = fleet.StartAll(ctx, specs) // each failure is in its client's state
	var results []Result
	tools := map[string][]string{} // server → its own tool names
	for _, spec := range specs {
		id, err := naming.ServerID(spec.Name)
		c, ok := fleet.Client(id)
		if err == nil && (!ok || c.Spec().Name != spec.Name) {
			err = fmt.Errorf("its name collides with another server's (both become %q)", id)
		}
		if err != nil {
			results = append(results, Result{ID: spec.Name, State: upstream.StateFailed, Err: err})
			continue
		}
		select {
		case <-c.Settled():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		r := compare(ctx, c, id, lock)
		if r.State == upstream.StateReady {
			tools[id] = r.Now.Keys(pin.Tools)
		}
		results = append(results, r)
	}
	unprefixed := map[string]bool{}
	for _, s := range cfg.Servers {
		id, err := naming.ServerID(s.Name)
		if err != nil {
			continue
		}
		unprefixed[id] = s.Unprefixed()
		if _, connected := tools[id]; !connected {
			tools[id] = lock.Servers[id].Keys(pin.Tools)
		}
	}
	sort.Slice(results, func(i, j int) bool { return results[i].ID < results[j].ID })
	// As serve names them (pin.OtherNames): an unprefixed server's tools
	// are exported as they are.
	others := pin.OtherNames(tools, catalog.ExportedName(naming.Scheme{Prefix: cfg.Trunk.Prefix}, unprefixed))
	return &Scan{Results: results, Others: others}, nil
}

// compare is the result of the settled client c: what it exports now and
// how that differs from lock, or why it cannot be read.
func compare(ctx context.Context, c *upstream.Client, id string, lock *pin.Lock) Result {
	state, err := c.State()
	r := Result{ID: id, State: state, Err: err}
	if state != upstream.StateReady {
		return r
	}
	now, err := pin.Snapshot(catalog.PinDefs(c.Catalog()))
	if err == nil {
		err = snapshotApps(ctx, c, now)
	}
	if err == nil {
		err = snapshotSkills(ctx, c, now)
	}
	if err != nil {
		r.State, r.Err = upstream.StateFailed, fmt.Errorf("a definition cannot be read: %w", err)
		return r
	}
	r.Now, r.Changes = now, pin.CompareAll(id, lock.Servers[id], now)
	return r
}

// snapshotApps reads each MCP App of the server (its ui:// resources) and
// adds what is pinned of it to now: the hash of the HTML it reads as.
func snapshotApps(ctx context.Context, c *upstream.Client, now pin.Server) error {
	for _, r := range c.Catalog().Resources {
		if !naming.IsUIURI(r.Key) {
			continue
		}
		params, _ := json.Marshal(map[string]string{"uri": r.Key})
		res, err := c.Call(ctx, "resources/read", params)
		if err != nil {
			return fmt.Errorf("app %s: %w", r.Key, err)
		}
		e, err := pin.AppEntry(r.Key, res)
		if err != nil {
			return err
		}
		if now[pin.Apps] == nil {
			now[pin.Apps] = map[string]pin.Entry{}
		}
		now[pin.Apps][r.Key] = e
	}
	return nil
}

// Print writes, server by server, what the scan found: a disabled server
// and one that failed with their entries kept, each ready one's drift with
// diffs and findings. It returns the changes found and the servers that
// failed to connect, which decide what the command does next.
func (s *Scan) Print(w io.Writer) (drift, failed int) {
	for _, r := range s.Results {
		switch {
		case r.State == upstream.StateDisabled:
			fmt.Fprintf(w, "\nserver %q: disabled, not connected; its entries in the lockfile are kept\n", r.ID)
		case r.State != upstream.StateReady:
			failed++
			why := string(r.State)
			if r.Err != nil {
				why = strings.TrimPrefix(textview.FirstLine(r.Err.Error()), fmt.Sprintf("server %q: ", r.ID))
			}
			fmt.Fprintf(w, "\nserver %q: failed to connect: %s\n  its entries in the lockfile are kept\n", r.ID, why)
		default:
			drift += len(r.Changes)
			textview.Drift(w, r.ID, r.Changes, r.Now, s.Others[r.ID])
		}
	}
	return drift, failed
}

// Record writes what each ready server exports now into the lockfile at
// path, under its lock; the entries of servers that did not connect are
// kept. It returns the servers whose entries changed.
func (s *Scan) Record(path string) ([]string, error) {
	err := pin.Update(path, func(l *pin.Lock) error {
		for _, r := range s.Results {
			if r.State == upstream.StateReady {
				l.Servers[r.ID] = r.Now
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var changed []string
	for _, r := range s.Results {
		if r.State == upstream.StateReady && len(r.Changes) > 0 {
			changed = append(changed, r.ID)
		}
	}
	return changed, nil
}
