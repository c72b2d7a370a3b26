package ops

import (
	"strings"
	"testing"
)

func TestAllReduceAndWeightSpecs(t *testing.T) {
	o, err := Parse("allreduce bytes=1048576 ranks=4")
	if err != nil {
		t.Fatal(err)
	}
	// 524288 bf16 elements; a ring sends 2·(n−1)/n of the message.
	if o.Kind != AllReduce || o.Elems != 524288 || o.Ranks != 4 {
		t.Fatalf("%+v", o)
	}
	if c := o.Cost(); c.Bytes != 2*0.75*1048576 || c.VectorFLOPs != 0.75*524288 {
		t.Errorf("cost %+v", c)
	}
	if back, err := Parse(o.String()); err != nil || back != o {
		t.Errorf("round trip %q: %+v, %v", o.String(), back, err)
	}
	// int4 weights stored as 4-bit values: a quarter of bf16's weight bytes.
	w, err := Parse("linear tokens=1 in=4096 out=4096 weight_dtype=fp4")
	if err != nil {
		t.Fatal(err)
	}
	if c := w.Cost(); c.Bytes != 4096*2+4096*4096*0.5+4096*2 {
		t.Errorf("weight-only fp4 linear moves %.0f bytes", c.Bytes)
	}
	if back, err := Parse(w.String()); err != nil || back != w {
		t.Errorf("round trip %q: %+v, %v", w.String(), back, err)
	}
	for spec, want := range map[string]string{
		"allreduce bytes=3 ranks=2":           "not a whole number of bf16 elements",
		"allreduce n=8":                       "ranks=0",
		"copy n=8 bytes=16":                   `unknown key "bytes"`,
		"add n=8 weight_dtype=fp8":            `unknown key "weight_dtype"`,
		"allreduce n=8 ranks=2 dtype=float77": "unknown data type",
	} {
		if _, err := Parse(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
}
