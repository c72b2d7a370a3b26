package roofline

import (
	"encoding/csv"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/gpucalc/gpucalc/ops"
)

// testdata/nccl_2gpu_h200.csv: bf16 all_reduce between two H200s over NVLink
// (NCCL 2.28.9, median CUDA-event time per call). The lower bound never
// beats a measurement; the expected time is within 12% of each.
func TestAllReduceAgainstNCCL(t *testing.T) {
	f, err := os.Open("testdata/nccl_2gpu_h200.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	m := mustNew(t, device(t, "h200"))
	n := 0
	for _, r := range recs[1:] {
		if r[0] != "all_reduce" {
			continue
		}
		b, _ := strconv.ParseInt(r[2], 10, 64)
		us, _ := strconv.ParseFloat(r[3], 64)
		op, err := ops.Parse("allreduce bytes=" + r[2] + " ranks=" + r[1])
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Analyze(op)
		if err != nil {
			t.Fatal(err)
		}
		if p.LowerBound*1e6 > us {
			t.Errorf("%d bytes: lower bound %.1f us above measured %.1f", b, p.LowerBound*1e6, us)
		}
		if e := math.Abs(p.Expected*1e6-us) / us; e > 0.12 {
			t.Errorf("%d bytes: expected %.1f us, measured %.1f (%.0f%%)", b, p.Expected*1e6, us, 100*e)
		}
		n++
	}
	if n < 10 {
		t.Fatalf("%d all_reduce rows", n)
	}
	// A GPU without NVLink exchanges over PCIe (its host link).
	p, err := mustNew(t, device(t, "l40s")).Analyze(ops.Op{Kind: ops.AllReduce, DType: "bf16", Elems: 1 << 20, Ranks: 2})
	if err != nil || p.Expected <= 0 || len(p.Notes) == 0 {
		t.Errorf("all-reduce on an L40S: %+v, %v", p, err)
	}
}
