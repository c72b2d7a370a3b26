package ncu

import (
	"bytes"
	"compress/gzip"
	"slices"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/rows"
)

// with returns smallRow with column col set to v.
func with(col, v string) []string {
	r := slices.Clone(smallRow)
	r[slices.Index(smallHeader, col)] = v
	return r
}

// TestReadImplausible: a duration that cannot be real and a number written
// with a decimal comma are refused with their line; a negative counter is
// kept, flagged.
func TestReadImplausible(t *testing.T) {
	for name, c := range map[string]struct {
		row  []string
		want string
	}{
		"negative duration":   {with(mDuration, "-3.5"), `line 4: gpu__time_duration.sum is "-3.5": a duration cannot be negative`},
		"NaN duration":        {with(mDuration, "nan"), `line 4: gpu__time_duration.sum is "nan"`},
		"infinite duration":   {with(mDuration, "-inf"), `line 4: gpu__time_duration.sum is "-inf"`},
		"decimal comma":       {with(mDuration, "1,5"), `line 4: gpu__time_duration.sum: value "1,5" has a decimal comma`},
		"decimal comma, zero": {with(mDRAMRead, "0,25"), `value "0,25" has a decimal comma`},
		"dot thousands":       {with(mDRAMWrite, "1.234,5"), `value "1.234,5" has a decimal comma`},
		"short group":         {with(mDRAMWrite, "12,34"), `value "12,34" has a decimal comma`},
		"long group":          {with(mDRAMWrite, "1,2345"), `value "1,2345" has a decimal comma`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Read(strings.NewReader(build(smallHeader, smallUnits, smallRow, c.row)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
	// Thousands separators are read as such.
	for in, want := range map[string]float64{"1,500": 1500, "1,234,567.5": 1234567.5, "-1,000": -1000, "+12,345,678": 12345678, "999": 999, "0.5": 0.5, "1,000e3": 1e6} {
		if v, ok, err := parseNumber(in); err != nil || !ok || v != want {
			t.Errorf("parseNumber(%q) = %g, %v, %v; want %g", in, v, ok, err, want)
		}
	}
	for _, in := range []string{"1,5", ",123", "1,,234", "1.5,3", "1234,567", "1-,234", "1,234,5678", "0x1p3", "1_000"} {
		if _, _, err := parseNumber(in); err == nil {
			t.Errorf("parseNumber(%q) read a number", in)
		}
	}
	over := readKernels(t, []byte(build(smallHeader, smallUnits, with(mTheoretical, "150"))))
	if len(over[0].Implausible) != 1 || over[0].Implausible[0] != "sm__maximum_warps_per_active_cycle_pct is 150%, over 100%" {
		t.Errorf("occupancy over 100%%: %q", over[0].Implausible)
	}
	ks := readKernels(t, []byte(build(smallHeader, smallUnits, with(mDRAMWrite, "-1,000"))))
	if len(ks) != 1 || len(ks[0].Implausible) != 1 || ks[0].Implausible[0] != "dram__bytes_write.sum is negative (-1000)" {
		t.Errorf("negative DRAM bytes: %q", ks[0].Implausible)
	}
}

// TestAnalyzeImplausible: a rate far above the device's ceiling is
// flagged; one at the ceiling is not.
func TestAnalyzeImplausible(t *testing.T) {
	d, err := devices.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	peak, _ := d.Peak(devices.BF16, devices.Tensor)
	bw := d.Bandwidth(devices.DRAM)
	k := Kernel{Duration: 1e-3, Work: []Work{{DType: devices.BF16, Path: devices.Tensor, FLOPs: 1e-3 * peak}}, Traffic: []Traffic{{DRAM, 1e-3 * bw}}}
	if a := Analyze(k, d); len(a.Implausible) != 0 {
		t.Errorf("at the ceilings: %q", a.Implausible)
	}
	k.Work[0].FLOPs *= 1e11
	k.Traffic[0].Bytes *= 2
	a := Analyze(k, d)
	if len(a.Implausible) != 2 || !strings.Contains(a.Implausible[0], "bf16_tensor at 1e+11 times the device's peak") || !strings.Contains(a.Implausible[1], "dram at 2 times") {
		t.Errorf("far above: %q", a.Implausible)
	}
}

// TestReadLimits: the limits on kernels, names and size are errors that
// say which and what to do; a gzip bomb is refused as it streams.
func TestReadLimits(t *testing.T) {
	three := build(smallHeader, smallUnits, smallRow, smallRow, smallRow)
	if _, err := ReadAtMost(strings.NewReader(three), 2); err == nil || !strings.Contains(err.Error(), "line 5: more than 2 kernels") || !strings.Contains(err.Error(), "--launch-count") {
		t.Errorf("past the kernels: %v", err)
	}
	if _, err := ReadAtMost(strings.NewReader(three), 3); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	long := with("Kernel Name", strings.Repeat("k", rows.MaxName+1))
	if _, err := Read(strings.NewReader(build(smallHeader, smallUnits, long))); err == nil || !strings.Contains(err.Error(), "line 3: a name of 65537 bytes, over the 64 KiB") {
		t.Errorf("a long name: %v", err)
	}
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(build(smallHeader, smallUnits)))
	many := bytes.Repeat([]byte(build(nil, nil, smallRow)), 1<<14)
	for range (20 << 20) / len(many) {
		w.Write(many)
	}
	w.Close()
	if _, err := Read(&b); err == nil || !strings.Contains(err.Error(), "compression bomb") {
		t.Errorf("a gzip bomb: %v", err)
	}
}
