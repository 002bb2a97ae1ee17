package main

import (
	"flag"
	"runtime"
	"strconv"
)

// parallelPerCPU is how many tests of this package run at once per CPU
// unless -parallel is given. The tests spend most of their time waiting
// on the processes they start (a trunk, its servers, node), not computing:
// at the go test default of one test per CPU the package kept a 2-core
// machine at 41% for 4 minutes; at three per CPU it took half the time
// (75%), and every test still waits for what it checks, never for a clock.
const parallelPerCPU = 3

// widenParallel raises -test.parallel to parallelPerCPU tests per CPU
// when the command line did not set it. Called after flag.Parse and before
// m.Run, which reads the flag when it starts the tests.
func widenParallel() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(parallelPerCPU*runtime.GOMAXPROCS(0)))
	}
}
