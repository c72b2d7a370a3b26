package main

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/reports"
)

func TestParseCarveout(t *testing.T) {
	for in, want := range map[string]string{
		"default": "default", "": "default", "-1": "default", "0%": "0%", "100%": "100%", "64K": "65536B", "100KiB": "102400B",
		"101%": "error", "50": "error", "5.5%": "error", "x%": "error", "-5%": "error", "1e3%": "error", " 50%x": "error",
	} {
		c, err := parseCarveout(in)
		got := c.String()
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("%q: got %s (%v), want %s", in, got, err, want)
		}
	}
}

// FuzzFlags: no flag value makes size or carveout parsing panic, and a
// parsed value is within range.
func FuzzFlags(f *testing.F) {
	for _, s := range []string{"48K", "50%", "default", "-1", "1e3", "0x10", "100%%", "9223372036854775807", "1.5M", "%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if b, err := parseSize("smem", s); err == nil && b < 0 {
			t.Fatalf("%q: negative size %d", s, b)
		}
		c, err := parseCarveout(s)
		if err != nil {
			return
		}
		a, _ := devices.ArchFor(devices.CC{Major: 9})
		r := occupancy.Calculate(a, occupancy.Kernel{Regs: 32}, occupancy.Launch{Threads: 128, Carveout: c})
		if b, ok := c.Size(); r.Err != nil && (!ok || b <= a.SmemPerSM) {
			t.Fatalf("%q: %v", s, r.Err)
		}
	})
}

// BenchmarkBatch runs `occupancy batch` over 1,000,000 generated rows (the
// issue's target: at most 2 s on one core; run with -cpu 1).
func BenchmarkBatch(b *testing.B) {
	var in bytes.Buffer
	in.WriteString("device,threads,regs,static_smem,dynamic_smem,carveout\n")
	names := []string{"h100", "sm_80", "8.6", "sm_90", "12.0"}
	for i := range 1_000_000 {
		carve := ""
		if i%3 == 0 {
			carve = strconv.Itoa(i % 101)
		}
		in.WriteString(strings.Join([]string{names[i%len(names)], strconv.Itoa(1 + i%1024), strconv.Itoa(i % 256),
			strconv.Itoa(i % 4 * 4096), strconv.Itoa(i % 28 * 4096), carve}, ","))
		in.WriteByte('\n')
	}
	c, err := devices.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	data := in.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := runBatch(bytes.NewReader(data), io.Discard, reports.FormatCSV, 0, c.Limits, func(int) {}); err != nil {
			b.Fatal(err)
		}
	}
}
