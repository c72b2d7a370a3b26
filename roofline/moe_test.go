package roofline

import (
	"bytes"
	"encoding/csv"
	"errors"
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
		// torch._grouped_mm is a CUTLASS grouped GEMM on sm_90
		// (ATen's GroupMM.cu), not SGLang's Triton fused MoE.
		moe = append(moe, row{fmt.Sprintf("moe tokens=%s hidden=%s inter=%s topk=%s experts=%s impl=cutlass", r[col["num_tokens"]], r[col["hidden_size"]],
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

// TestMoEQuantRefused checks that a moe op's quant= is refused on a GPU
// without the scheme's tensor cores exactly as a matmul's is: nvfp4 and
// mxfp4 need Blackwell's fp4, w4a8 fp8 (not the A100's), and weight-only
// schemes run anywhere bf16 does.
func TestMoEQuantRefused(t *testing.T) {
	for _, tc := range []struct {
		dev, q  string
		refused bool
	}{
		{"H100 SXM", "nvfp4", true},
		{"H100 SXM", "mxfp4", true},
		{"B200", "nvfp4", false},
		{"A100 SXM4 80GB", "w4a8_mxfp4_mxfp8", true},
		{"H100 SXM", "w4a8_mxfp4_mxfp8", false},
		{"A100 SXM4 80GB", "w4a16_mxfp4", false},
		{"A100 SXM4 80GB", "int4_wo", false},
	} {
		d, err := devices.Lookup(tc.dev)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range []string{"moe tokens=64 hidden=2048 inter=768 topk=8 experts=128 quant=", "linear tokens=64 in=2048 out=768 quant="} {
			op, err := ops.Parse(spec + tc.q)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Analyze(d, op)
			var u *UnsupportedError
			if got := errors.As(err, &u); got != tc.refused || (!tc.refused && err != nil) {
				t.Errorf("%s on %s: error %v, want refused %v", op, tc.dev, err, tc.refused)
			}
		}
	}
}

// TestPeerAllToAll scores the alltoall op, the all-reduce's link curve
// applied to (n−1)/n of each rank's message, against nccl-tests' all-to-all
// in aiconfigurator's tables (fp16 messages of 1 KiB to 1 GiB over 2 to 8
// GPUs) on the H100 and B200. The bounds are today's figures, against
// regressions.
func TestPeerAllToAll(t *testing.T) {
	for gpu, bound := range map[string][2]float64{"h100_sxm": {0.19, 0.43}, "b200_sxm": {0.27, 0.42}} {
		d, err := devices.Lookup(moePeerGPUs[gpu])
		if err != nil {
			t.Fatal(err)
		}
		all, err := csv.NewReader(bytes.NewReader(testfile.Gunzip(t, "testdata/peer/"+gpu+"_nccl.csv.gz"))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, h := range all[0] {
			col[h] = i
		}
		var errs []float64
		for _, r := range all[1:] {
			if r[col["op_name"]] != "alltoall" {
				continue
			}
			op, err := ops.Parse(fmt.Sprintf("alltoall n=%s ranks=%s dtype=fp16", r[col["message_size"]], r[col["num_gpus"]]))
			if err != nil {
				t.Fatal(err)
			}
			p, err := Analyze(d, op)
			if err != nil {
				t.Fatal(err)
			}
			ms, _ := strconv.ParseFloat(r[col["latency_ms"]], 64)
			errs = append(errs, math.Abs(p.Expected-ms*1e-3)/(ms*1e-3))
			if p.LowerBound > ms*1e-3 {
				t.Errorf("%s %s: lower bound %.3g s above the measured %.3g s", gpu, op, p.LowerBound, ms*1e-3)
			}
		}
		sort.Float64s(errs)
		med, p90 := errs[len(errs)/2], errs[len(errs)*9/10]
		t.Logf("%s alltoall: %d rows, median error %.1f%%, p90 %.1f%%", gpu, len(errs), 100*med, 100*p90)
		if med > bound[0] || p90 > bound[1] {
			t.Errorf("%s alltoall: median %.1f%%, p90 %.1f%%; regressed past %.0f%%, %.0f%%", gpu, 100*med, 100*p90, 100*bound[0], 100*bound[1])
		}
	}
}

// TestMoEImplRefused checks that FlashInfer's TensorRT-LLM MoE, built for
// compute capability 10.x alone, is refused elsewhere and taken there.
func TestMoEImplRefused(t *testing.T) {
	op, err := ops.Parse("moe tokens=64 hidden=2048 inter=768 topk=8 experts=128 impl=trtllm")
	if err != nil {
		t.Fatal(err)
	}
	for dev, refused := range map[string]bool{"L40S": true, "H100 SXM": true, "B200": false} {
		d, err := devices.Lookup(dev)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Analyze(d, op); (err != nil) != refused {
			t.Errorf("%s on %s: error %v, want refused %v", op, dev, err, refused)
		}
	}
}
