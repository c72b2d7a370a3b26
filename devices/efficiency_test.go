package devices

import (
	"strings"
	"testing"
)

// TestEfficiencyTable checks the shipped figures are fractions, each with a
// source, and that every family of the occupancy table resolves.
func TestEfficiencyTable(t *testing.T) {
	tab, err := efficiencies()
	if err != nil {
		t.Fatal(err)
	}
	for k, m := range tab.memory {
		if m.v <= 0.5 || m.v > 1 || m.src == "" {
			t.Errorf("memory.%s = %g (%q)", k, m.v, m.src)
		}
	}
	for fam, a := range tab.archs {
		for k, v := range a.GEMM {
			if v <= 0.3 || v > 1 || a.Sources["gemm."+k] == "" {
				t.Errorf("%s gemm.%s = %g", fam, k, v)
			}
		}
	}
	for _, tl := range tab.base.Tiles {
		if tl.Efficiency > 1 {
			t.Errorf("tile %dx%d efficiency %g > 1", tl.M, tl.N, tl.Efficiency)
		}
	}
	h, err := Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	e, err := h.Efficiency()
	if err != nil {
		t.Fatal(err)
	}
	// gt: 1024^3 floats copied at 3.03 TB/s on a 3.35 TB/s part.
	if got := e.Stream * h.Memory.BytesPerSecond; got < 3.0e12 || got > 3.06e12 {
		t.Errorf("H100 streaming bandwidth %g, want about 3.03e12", got)
	}
	if e.Family != "Hopper" || len(e.Notes) != 0 {
		t.Errorf("H100: family %q notes %v", e.Family, e.Notes)
	}
	odd := h
	odd.Architecture, odd.Memory.Type = "Kepler", "GDDR5"
	e, err = odd.Efficiency()
	if err != nil || e.Family != "default" || len(e.Notes) != 2 || !strings.Contains(e.Notes[1], "GDDR5") {
		t.Errorf("unknown family and memory: %+v, %v", e, err)
	}
}

func TestParseEfficiencyErrors(t *testing.T) {
	for _, doc := range []string{
		"bogus: 1\n",
		"sources: {a: x}\nlaunch_overhead: {value: 1us, source: b}\n",
		"sources: {a: x}\nlaunch_overhead: {value: -1us, source: a}\n",
	} {
		if _, err := parseEfficiency([]byte(doc)); err == nil {
			t.Errorf("%q: no error", doc)
		}
	}
	// A family's figures, each refused by its own check: the catalog's
	// file with one family added.
	data, err := dataFS.ReadFile("data/arch/efficiency.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ figure, want string }{
		{"attention_group_max: {value: 1.5, source: gt}", "archs.Test.attention_group_max: 1.5 is not a whole number of heads"},
		{"weight_cycle_l2: {value: 2, source: gt}", "archs.Test.weight_cycle_l2: 2 is not in [0, 1]"},
		{"attention_mma: {bf16_tensor: {value: 1.5, source: gt}}", "archs.Test.attention_mma.bf16_tensor: 1.5 is not in (0, 1]"},
		{"gemm: {fp12: {value: 0.5, source: gt}}", `archs.Test.gemm: unknown peak "fp12"`},
		{"graph_ramp: {value: 2us, source: nope}", `source "nope" is not in the file's sources`},
		{"stream_k: {value: true, source: nope}", `archs.Test.stream_k: unknown source "nope"`},
	} {
		doc := string(data) + "  Test:\n    sfu_per_sm_per_clock: {value: 16, source: gt}\n    " + tc.figure + "\n"
		if _, err := parseEfficiency([]byte(doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.figure, err, tc.want)
		}
	}
}
