// Command synth writes the generated inputs the benchmarks read
// (internal/synth) to a file, so that 'gpucalc ncu' and 'gpucalc trace' can
// be timed as a user runs them, with /usr/bin/time -v for the peak RSS:
//
//	go run ./tools/synth -ncu 1000000 > /tmp/ncu1m.csv
//	/usr/bin/time -v gpucalc ncu /tmp/ncu1m.csv --format json > /dev/null
//	go run ./tools/synth -trace 2000000 > /tmp/trace2m.json
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/gpucalc/gpucalc/internal/synth"
)

func main() {
	ncu := flag.Int("ncu", 0, "write an Nsight Compute export of this many launches")
	trace := flag.Int("trace", 0, "write a torch.profiler trace of this many kernels")
	flag.Parse()
	var r io.Reader
	switch {
	case *ncu > 0 && *trace == 0:
		r = synth.NCUExport(*ncu)
	case *trace > 0 && *ncu == 0:
		r = synth.Trace(*trace)
	default:
		fmt.Fprintln(os.Stderr, "synth: give one of -ncu N or -trace N")
		os.Exit(2)
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	if _, err := io.Copy(w, r); err != nil {
		fmt.Fprintln(os.Stderr, "synth:", err)
		os.Exit(1)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "synth:", err)
		os.Exit(1)
	}
}
