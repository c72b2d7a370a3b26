package roofline

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/testfile"
	"github.com/gpucalc/gpucalc/ops"
)

// testdata/moe_h100.csv and mla_h100.csv were measured on this project's
// H100 (tools/moe/bench.py: CUDA graphs, warm L2): a Qwen3-30B-A3B MoE layer
// through torch._grouped_mm and DeepSeek-V2-Lite's latent attention (and
// DeepSeek-V3's 128 heads) through a split-KV Triton kernel (absorbed
// decode) and SDPA (expanded prefill). TestOwnH100 prices the same ops and
// records how far they are; the bounds are today's figures, against
// regressions.
func TestOwnH100(t *testing.T) {
	d, err := devices.Lookup("H100 SXM")
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		spec     string
		measured float64
	}
	var moe, decode, prefill []row
	recs, col := testfile.CSV(t, "testdata/moe_h100.csv")
	for _, r := range recs {
		if r[col["part"]] != "layer" {
			continue
		}
		ms, _ := strconv.ParseFloat(r[col["latency_ms"]], 64)
		moe = append(moe, row{fmt.Sprintf("moe tokens=%s hidden=%s inter=%s topk=%s experts=%s", r[col["num_tokens"]], r[col["hidden_size"]],
			r[col["inter_size"]], r[col["topk"]], r[col["num_experts"]]), ms * 1e-3})
	}
	recs, col = testfile.CSV(t, "testdata/mla_h100.csv")
	for _, r := range recs {
		if r[col["part"]] != "attention" {
			continue
		}
		ms, _ := strconv.ParseFloat(r[col["latency_ms"]], 64)
		g := func(k string) string { return r[col[k]] }
		if g("phase") == "decode" {
			decode = append(decode, row{fmt.Sprintf("mla b=%s h=%s sq=1 sk=%s absorbed", g("batch_size"), g("num_heads"), g("seq_k")), ms * 1e-3})
		} else {
			prefill = append(prefill, row{fmt.Sprintf("mla b=%s h=%s s=%s causal expanded", g("batch_size"), g("num_heads"), g("seq_k")), ms * 1e-3})
		}
	}
	for _, tc := range []struct {
		name        string
		rows        []row
		median, p90 float64
	}{
		{"moe layer (torch._grouped_mm)", moe, 0.25, 0.55},
		{"mla decode (Triton split-KV)", decode, 0.58, 0.70},
		{"mla prefill (SDPA cuDNN)", prefill, 0.22, 0.40},
	} {
		var errs []float64
		for _, r := range tc.rows {
			op, err := ops.Parse(r.spec)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := m.asMeasured(t, op)
			e := (got - r.measured) / r.measured
			t.Logf("%-55s measured %9.1f µs  gpucalc %9.1f µs  %+6.1f%%", r.spec, r.measured*1e6, got*1e6, 100*e)
			errs = append(errs, math.Abs(e))
		}
		sort.Float64s(errs)
		med, p90 := errs[len(errs)/2], errs[len(errs)*9/10]
		t.Logf("%s: %d rows, median error %.1f%%, p90 %.1f%%", tc.name, len(errs), 100*med, 100*p90)
		if med > tc.median || p90 > tc.p90 {
			t.Errorf("%s: median %.1f%%, p90 %.1f%%; regressed past %.0f%%, %.0f%%", tc.name, 100*med, 100*p90, 100*tc.median, 100*tc.p90)
		}
	}
}

// TestMoELoads checks the routing arithmetic: balanced routing hits
// min(E, T·k) experts evenly; a power law's busiest expert takes far more
// than its share and never more than every token; expert parallelism keeps
// E/EP experts on the GPU.
func TestMoELoads(t *testing.T) {
	parse := func(s string) ops.Op {
		o, err := ops.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	l := parse("moe tokens=1 hidden=2048 inter=768 topk=8 experts=128").Loads()
	if len(l) != 8 || l[0] != 1 {
		t.Errorf("one token, top-8 of 128: loads %v, want 8 experts of 1", l)
	}
	l = parse("moe tokens=4096 hidden=2048 inter=768 topk=8 experts=128").Loads()
	if len(l) != 128 || l[0] != 256 {
		t.Errorf("4096 tokens balanced: %d experts, busiest %g; want 128 of 256", len(l), l[0])
	}
	l = parse("moe tokens=4096 hidden=2048 inter=768 topk=8 experts=128 dist=power_law:1.2").Loads()
	if l[0] <= 4*256 || l[0] > 4096 {
		t.Errorf("4096 tokens, power law 1.2: busiest expert %g; want several times 256 and at most 4096", l[0])
	}
	l = parse("moe tokens=4096 hidden=7168 inter=2048 topk=8 experts=256 ep=8").Loads()
	if len(l) != 32 || l[0] != 128 {
		t.Errorf("ep=8 of 256 experts: %d local experts, busiest %g; want 32 of 128", len(l), l[0])
	}
}
