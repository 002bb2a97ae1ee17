package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/mcptrunk/mcptrunk/internal/config"
	"github.com/mcptrunk/mcptrunk/proxy"
	"github.com/mcptrunk/mcptrunk/upstream"
)

// serveTrunkCommand is the hidden subcommand that -profile runs instead of
// `mcptrunk serve`: a trunk served on this process's stdio (the same
// proxy.New(...).Serve call, without the config watcher and the log),
// writing a CPU profile and an allocation profile when the host closes
// stdin. Profiling is a switch of this benchmark only, not of the product.
const serveTrunkCommand = "serve-trunk"

func serveTrunk(args []string, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("mcptrunk-bench "+serveTrunkCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "the trunk config")
	profile := fs.String("profile", "", "write `prefix`.cpu.pprof and prefix.allocs.pprof")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *configPath == "" || *profile == "" {
		return errors.New("serve-trunk needs -config and -profile")
	}
	cfg, err := config.Load(*configPath)
	if err != nil {
		return err
	}
	f, err := os.Create(*profile + ".cpu.pprof")
	if err != nil {
		return err
	}
	runtime.MemProfileRate = 64 << 10
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	defer func() {
		pprof.StopCPUProfile()
		err = errors.Join(err, f.Close(), writeAllocs(*profile+".allocs.pprof"))
	}()
	t := proxy.New(cfg, &proxy.Options{Version: "bench", Restart: upstream.DefaultRestartPolicy})
	if err := t.Serve(context.Background(), stdin, stdout); err != nil {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}

func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
}
