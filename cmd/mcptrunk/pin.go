package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/internal/pin"
	"github.com/mcptrunk/mcptrunk/internal/pinscan"
	"github.com/mcptrunk/mcptrunk/internal/wording"
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
	specs, err := config.Select(cfg.Servers, env.args)
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

	scan, err := pinscan.Run(ctx, cfg, specs, lock, pinscan.Options{Logger: logger, Version: version(), Capabilities: sharedCapabilities})
	if err != nil {
		return err
	}
	drift, failed := scan.Print(env.stdout)
	fmt.Fprintln(env.stdout)
	if failed > 0 {
		fmt.Fprintf(env.stdout, "%d of %s failed to connect\n", failed, plural(len(scan.Results), "server", "servers"))
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
	changed, err := scan.Record(path)
	if err != nil {
		return err
	}
	recorded := make([]string, len(changed))
	for i, id := range changed {
		recorded[i] = fmt.Sprintf("%q", id)
	}
	fmt.Fprintf(env.stdout, "Recorded %s (%s) in %s.\n", plural(drift, "change", "changes"), strings.Join(recorded, ", "), path)
	return failure()
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
