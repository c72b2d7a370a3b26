package roofline

import (
	"math"
	"strconv"
	"testing"

	"github.com/gpucalc/gpucalc/internal/testfile"
	"github.com/gpucalc/gpucalc/ops"
)

// testdata/allreduce_graph_2gpu_h200.csv: bf16 all-reduce between two H200s
// over NVLink (NCCL 2.28.9), calls replayed back to back in a CUDA graph, and
// testdata/nccl_2gpu_h200.csv: single calls timed with the host in the loop.
// The lower bound never beats either measurement; the expected time follows
// the back-to-back curve, which is how every kernel is priced (within 30%
// everywhere, 11% at decode's small and prefill's large messages).
func TestAllReduceAgainstNCCL(t *testing.T) {
	m := mustNew(t, device(t, "h200"))
	analyze := func(bytes, ranks string) Point {
		op, err := ops.Parse("allreduce bytes=" + bytes + " ranks=" + ranks)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Analyze(op)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	graph, _ := testfile.CSV(t, "testdata/allreduce_graph_2gpu_h200.csv") // world,bytes,single_us,eager_us,graph_us
	for _, r := range graph {
		b, _ := strconv.ParseInt(r[1], 10, 64)
		us, _ := strconv.ParseFloat(r[4], 64)
		p := analyze(r[1], r[0])
		if p.LowerBound*1e6 > us {
			t.Errorf("%d bytes: lower bound %.1f us above measured %.1f", b, p.LowerBound*1e6, us)
		}
		limit := 0.30
		if b <= 256<<10 || b >= 16<<20 && b < 256<<20 {
			limit = 0.11
		}
		if e := math.Abs(p.Expected*1e6-us) / us; e > limit {
			t.Errorf("%d bytes: expected %.1f us, measured %.1f back to back (%.0f%%; allowed %.0f%%)", b, p.Expected*1e6, us, 100*e, 100*limit)
		}
	}
	single, _ := testfile.CSV(t, "testdata/nccl_2gpu_h200.csv") // op,world,bytes_per_rank,us,busbw_gbps
	n := 0
	for _, r := range single {
		if r[0] != "all_reduce" {
			continue
		}
		us, _ := strconv.ParseFloat(r[3], 64)
		if p := analyze(r[2], r[1]); p.LowerBound*1e6 > us {
			t.Errorf("%s bytes: lower bound %.1f us above a single call's %.1f", r[2], p.LowerBound*1e6, us)
		}
		n++
	}
	if len(graph) < 9 || n < 10 {
		t.Fatalf("%d back-to-back rows, %d single-call rows", len(graph)-1, n)
	}
	// A GPU without NVLink exchanges over PCIe (its host link).
	p, err := mustNew(t, device(t, "l40s")).Analyze(ops.Op{Kind: ops.AllReduce, DType: "bf16", Elems: 1 << 20, Ranks: 2})
	if err != nil || p.Expected <= 0 || len(p.Notes) == 0 {
		t.Errorf("all-reduce on an L40S: %+v, %v", p, err)
	}
}

// TestAllReduceDefaults keeps the defaults for unmeasured links equal to the
// H200's measured figures they are taken from.
func TestAllReduceDefaults(t *testing.T) {
	me := device(t, "h200").Measured
	if me == nil || math.Abs(me.AllReduceLatency/allReduceLatency-1) > 1e-9 || math.Abs(me.AllReduceBusBandwidth/(allReduceLinkFrac*device(t, "h200").PeerLink.BytesPerSecond)-1) > 1e-9 {
		t.Errorf("defaults %.4g s, %.4g of the link; the H200's measured all-reduce is %+v", allReduceLatency, allReduceLinkFrac, me)
	}
}
