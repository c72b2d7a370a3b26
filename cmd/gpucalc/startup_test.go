package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// startupCommands are the examples whose start-to-exit time
// BenchmarkStartup measures: one per command, on the inputs of the README.
var startupCommands = []string{
	"--help",
	"devices",
	"devices show h100",
	"occupancy --regs 64 --smem 48K",
	"occupancy sweep --vary regs",
	"roofline --op matmul~m=4096~n=4096~k=4096~dtype=bf16",
	"check examples/llama3-8b-decode.yaml",
	"ncu ncu/testdata/ncu_raw.csv.gz",
	"simulate --warps-per-sm 16",
	"model llama-3.1-8b",
}

// BenchmarkStartup runs the built binary, process start to exit, and
// reports the median wall time of each command in ms (the target is 10 ms).
// Run it with: go test ./cmd/gpucalc -run '^$' -bench Startup -benchtime 50x
func BenchmarkStartup(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "gpucalc")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range startupCommands {
		args := strings.Fields(c)
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], "~", " ") // one argument with spaces
		}
		b.Run(strings.ReplaceAll(c, " ", "_"), func(b *testing.B) {
			times := make([]time.Duration, 0, b.N)
			for b.Loop() {
				cmd := exec.Command(bin, args...)
				cmd.Dir = root
				cmd.Env = append(os.Environ(), "GPUCALC_DEVICE=", "GPUCALC_DEVICES=")
				start := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%s: %v\n%s", c, err, out)
				}
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2])/1e6, "median-ms")
		})
	}
}
