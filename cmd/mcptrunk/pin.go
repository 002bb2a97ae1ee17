package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/pin"
	"github.com/mcptrunk/mcptrunk/internal/textview"
	"github.com/mcptrunk/mcptrunk/internal/wording"
	"github.com/mcptrunk/mcptrunk/naming"
	"github.com/mcptrunk/mcptrunk/proxy/catalog"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// pinCommand connects servers, shows how their definitions differ from the
// lockfile (word diffs of texts, line diffs of schemas, and findings), and
// records what they export now once the user agrees. It works whatever
// trunk.pin says: it is how definitions get pinned.
type pinCommand struct {
	yes   bool // record without asking
	check bool // only compare: exit 1 on drift, write nothing
}

func (c *pinCommand) flags(fs *flagSet) {
	fs.BoolVar(&c.yes, "yes", false, "record the changes without asking")
	fs.BoolVar(&c.check, "check", false, "only compare with the lockfile; exit 1 if anything differs")
}

// pinned is what pin found of one selected server.
type pinned struct {
	id      string // the server's identifier, its key in the lockfile
	state   upstream.State
	err     error
	now     pin.Server
	changes []pin.Change
}

func (c *pinCommand) run(ctx context.Context, env *environment) error {
	logger, err := env.logger(slog.LevelError)
	if err != nil {
		return err
	}
	cfg, err := env.loadConfig()
	if err != nil {
		return err
	}
	path := cfg.Trunk.LockFile
	if path == "" {
		return fmt.Errorf("no lockfile: the config was not read from a file")
	}
	specs, err := selectServers(cfg.Servers, env.args)
	if err != nil {
		return err
	}
	lock, err := pin.Read(path)
	if err != nil {
		// Nothing is compared with, nor written over, a lockfile that
		// cannot be read: it may hold what the user trusted.
		return fmt.Errorf("%w\nfix the file, or remove it to pin every server afresh", err)
	}
	fmt.Fprintf(env.stdout, "lockfile: %s\n", path)

	results, others, err := connectAndSnapshot(ctx, cfg, specs, lock, logger)
	if err != nil {
		return err
	}

	drift, failed := 0, 0
	for _, r := range results {
		switch {
		case r.state == upstream.StateDisabled:
			fmt.Fprintf(env.stdout, "\nserver %q: disabled, not connected; its entries in the lockfile are kept\n", r.id)
		case r.state != upstream.StateReady:
			failed++
			why := string(r.state)
			if r.err != nil {
				why = strings.TrimPrefix(textview.FirstLine(r.err.Error()), fmt.Sprintf("server %q: ", r.id))
			}
			fmt.Fprintf(env.stdout, "\nserver %q: failed to connect: %s\n  its entries in the lockfile are kept\n", r.id, why)
		default:
			drift += len(r.changes)
			textview.Drift(env.stdout, r.id, r.changes, r.now, others[r.id])
		}
	}
	fmt.Fprintln(env.stdout)
	if failed > 0 {
		fmt.Fprintf(env.stdout, "%d of %s failed to connect\n", failed, plural(len(results), "server", "servers"))
	}
	failure := func() error {
		if failed > 0 {
			return exitError(1)
		}
		return nil
	}
	if drift == 0 {
		if failed > 0 {
			fmt.Fprintf(env.stdout, "Every server that connected matches the lockfile (%s).\n", path)
		} else {
			fmt.Fprintf(env.stdout, "Everything matches the lockfile (%s).\n", path)
		}
		return failure()
	}
	if c.check {
		fmt.Fprintf(env.stdout, "%s not in the lockfile (%s); run \"mcptrunk pin\" to review and record %s.\n",
			plural(drift, "change", "changes"), path, map[bool]string{true: "it", false: "them"}[drift == 1])
		return exitError(1)
	}
	if !c.yes {
		fmt.Fprintf(env.stdout, "Record these changes in %s? [y/N] ", path)
		if !confirmed(ctx, env.stdin) {
			fmt.Fprintln(env.stdout, "Nothing recorded.")
			return exitError(1)
		}
	}
	err = pin.Update(path, func(l *pin.Lock) error {
		for _, r := range results {
			if r.state == upstream.StateReady {
				l.Servers[r.id] = r.now
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var recorded []string
	for _, r := range results {
		if r.state == upstream.StateReady && len(r.changes) > 0 {
			recorded = append(recorded, fmt.Sprintf("%q", r.id))
		}
	}
	fmt.Fprintf(env.stdout, "Recorded %s (%s) in %s.\n", plural(drift, "change", "changes"), strings.Join(recorded, ", "), path)
	return failure()
}

// selectServers returns the specs named (by config name or identifier), or
// every spec when none is.
func selectServers(specs []config.Spec, names []string) ([]config.Spec, error) {
	if len(names) == 0 {
		return specs, nil
	}
	var out []config.Spec
	seen := map[string]bool{}
	for _, name := range names {
		i := slices.IndexFunc(specs, func(s config.Spec) bool {
			id, _ := naming.ServerID(s.Name)
			return s.Name == name || id == name
		})
		if i < 0 {
			var known []string
			for _, s := range specs {
				known = append(known, s.Name)
			}
			sort.Strings(known)
			return nil, fmt.Errorf("unknown server %q (the config has: %s)", name, strings.Join(known, ", "))
		}
		if !seen[specs[i].Name] {
			seen[specs[i].Name] = true
			out = append(out, specs[i])
		}
	}
	return out, nil
}

// connectAndSnapshot starts the selected servers (no restarts), waits until
// each has listed everything it offers or failed, and compares each ready
// one with the lockfile. It also returns, per server, the names of other
// servers' tools its descriptions should not mention: those of the servers
// connected, and for the others those pinned.
//
// The servers are told what serve --http tells them (sharedCapabilities,
// a 2025 revision first): many offer some tools only to a host that can
// sample or elicit, and what is pinned is what hosts are offered, the
// same as serve records on first sight. (Tools offered only to a host that
// declares roots are not: a shared trunk never declares a host's roots.)
func connectAndSnapshot(ctx context.Context, cfg *config.Config, specs []config.Spec, lock *pin.Lock, logger *slog.Logger) ([]pinned, map[string][]string, error) {
	host := upstream.NewFleet(&upstream.Options{Logger: logger, Concurrency: cfg.Trunk.Concurrency, Version: version(),
		Capabilities: sharedCapabilities, PreferLegacy: true})
	defer host.Close(context.WithoutCancel(ctx))
	_ = host.StartAll(ctx, specs) // each failure is in its client's state
	var results []pinned
	tools := map[string][]string{} // server → its own tool names
	for _, spec := range specs {
		id, err := naming.ServerID(spec.Name)
		c, ok := host.Client(id)
		if err == nil && (!ok || c.Spec().Name != spec.Name) {
			err = fmt.Errorf("its name collides with another server's (both become %q)", id)
		}
		if err != nil {
			results = append(results, pinned{id: spec.Name, state: upstream.StateFailed, err: err})
			continue
		}
		select {
		case <-c.Settled():
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		state, err := c.State()
		r := pinned{id: id, state: state, err: err}
		if state == upstream.StateReady {
			now, err := pin.Snapshot(catalog.PinDefs(c.Catalog()))
			if err == nil {
				err = snapshotApps(ctx, c, now)
			}
			if err != nil {
				r.state, r.err = upstream.StateFailed, fmt.Errorf("a definition cannot be read: %w", err)
			} else {
				r.now = now
				r.changes = pin.CompareWithApps(r.id, lock.Servers[r.id], now)
				tools[r.id] = now.Keys(pin.Tools)
			}
		}
		results = append(results, r)
	}
	for _, s := range cfg.Servers {
		id, err := naming.ServerID(s.Name)
		if _, connected := tools[id]; err == nil && !connected {
			tools[id] = lock.Servers[id].Keys(pin.Tools)
		}
	}
	sort.Slice(results, func(i, j int) bool { return results[i].id < results[j].id })
	return results, othersTools(tools, naming.Scheme{Prefix: cfg.Trunk.Prefix}, cfg.Servers), nil
}

// othersTools lists, for each server, the names of every other server's
// tools that its descriptions should not mention, as serve does
// (pin.OtherNames; an unprefixed server's tools are exported as they are).
func othersTools(tools map[string][]string, scheme naming.Scheme, servers []config.Spec) map[string][]string {
	unprefixed := map[string]bool{}
	for _, s := range servers {
		if id, err := naming.ServerID(s.Name); err == nil {
			unprefixed[id] = s.Unprefixed()
		}
	}
	return pin.OtherNames(tools, func(server, key string) string {
		if unprefixed[server] {
			return key
		}
		return scheme.Name(server, key)
	})
}

// confirmed reads one line and reports whether it is "y" or "yes". An
// interrupt (which the signal context catches) counts as no.
func confirmed(ctx context.Context, r io.Reader) bool {
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		answer <- strings.ToLower(strings.TrimSpace(line))
	}()
	select {
	case a := <-answer:
		return a == "y" || a == "yes"
	case <-ctx.Done():
		return false
	}
}

func plural(n int, one, many string) string { return wording.Count(n, one, many) }

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
