package roofline

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/testfile"
	"github.com/gpucalc/gpucalc/ops"
)

// testdata/peer/ holds aiconfigurator's op tables (github.com/ai-dynamo/
// aiconfigurator, Apache-2.0: SGLang 0.5.14, 0.5.10 for the A100's MoE) for
// the calibration GPUs: MoE layers and DeepSeek-V3 latent attention, each
// configuration timed with several kernels, in a CUDA graph replayed with no
// L2 flush. The fastest kernel of a configuration is its measured time.

// moePeerGPUs maps the tables' GPU names to the catalog's.
var moePeerGPUs = map[string]string{"a100_sxm": "A100 SXM4 80GB", "h100_sxm": "H100 SXM", "b200_sxm": "B200", "l40s": "L40S"}

// moePeerRow is one configuration: its op and the fastest kernel's time.
type moePeerRow struct {
	op       ops.Op
	measured float64
	kernel   string
}

// readPeer reads a table and keeps the fastest kernel per configuration
// (every column but the kernel and the latency).
func readPeer(t *testing.T, gpu, kind string, op func(r []string, col map[string]int) (ops.Op, error)) []moePeerRow {
	data := testfile.Gunzip(t, "testdata/peer/"+gpu+"_"+kind+".csv.gz")
	all, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range all[0] {
		col[h] = i
	}
	best := map[string]moePeerRow{}
	var keys []string
	for _, r := range all[1:] {
		lat, err := strconv.ParseFloat(r[col["latency"]], 64)
		if err != nil {
			t.Fatal(err)
		}
		var k []string
		for h, i := range col {
			if h != "kernel_source" && h != "latency" && h != "framework" && h != "version" && h != "device" {
				k = append(k, h+"="+r[i])
			}
		}
		sort.Strings(k)
		key := strings.Join(k, ",")
		b, ok := best[key]
		if ok && b.measured <= lat*1e-3 {
			continue
		}
		o, err := op(r, col)
		if err != nil {
			t.Fatalf("%s %s: %v", gpu, kind, err)
		}
		if !ok {
			keys = append(keys, key)
		}
		best[key] = moePeerRow{o, lat * 1e-3, r[col["kernel_source"]]}
	}
	out := make([]moePeerRow, 0, len(keys))
	for _, k := range keys {
		out = append(out, best[k])
	}
	return out
}

var peerQuant = map[string]string{"bfloat16": "bf16", "fp8_block": "fp8_block", "nvfp4": "nvfp4", "w4a16_mxfp4": "w4a16_mxfp4",
	"w4a8_mxfp4_mxfp8": "w4a8_mxfp4_mxfp8", "int4_wo": "int4_wo"}

// peerMoEImpl maps the tables' kernel_source to the moe op's impl=: each
// configuration was timed with the kernel SGLang runs for its model
// (situ_as_silu: gpt-oss's clamped SwiGLU run as SiLU, the same kernel).
var peerMoEImpl = map[string]string{
	"sglang_fused_moe_triton": ops.ImplTriton, "sglang_fused_moe_triton_situ_as_silu": ops.ImplTriton,
	"sglang_flashinfer_trtllm_moe": ops.ImplTRTLLM, "sglang_mxfp4_flashinfer_trtllm_moe": ops.ImplTRTLLM,
	"sglang_flashinfer_cutlass_moe": ops.ImplCUTLASS,
	"sglang_marlin_moe":             ops.ImplMarlin, "sglang_marlin_moe_situ_as_silu": ops.ImplMarlin,
}

func peerMoE(r []string, col map[string]int) (ops.Op, error) {
	g := func(k string) string { return r[col[k]] }
	q, ok := peerQuant[g("moe_dtype")]
	if !ok {
		return ops.Op{}, fmt.Errorf("moe_dtype %s", g("moe_dtype"))
	}
	dist := "balanced"
	if a, ok := strings.CutPrefix(g("distribution"), "power_law_"); ok {
		dist = "power_law:" + a
	}
	gate := ""
	// NVIDIA's Nemotron-3 layers (the collector's case list,
	// collector/cases/models/NemotronHForCausalLM_cases.yaml: 6 of 128
	// experts of 2688×1856, 22 of 512) have experts without a gate (a
	// squared ReLU, the collector's non-gated model patterns).
	if (g("topk") == "22" && g("num_experts") == "512") || (g("hidden_size") == "2688" && g("inter_size") == "1856" && g("topk") == "6" && g("num_experts") == "128") {
		gate = " ungated"
	}
	impl, ok := peerMoEImpl[g("kernel_source")]
	if !ok {
		return ops.Op{}, fmt.Errorf("kernel_source %s", g("kernel_source"))
	}
	return ops.Parse(fmt.Sprintf("moe tokens=%s hidden=%s inter=%s topk=%s experts=%s tp=%s ep=%s quant=%s dist=%s%s impl=%s",
		g("num_tokens"), g("hidden_size"), g("inter_size"), g("topk"), g("num_experts"), g("moe_tp_size"), g("moe_ep_size"), q, dist, gate, impl))
}

// peerMLA reads a context (prefill) or generation (one decode step) row.
// The collector runs Hopper and older GPUs' prefill in the absorbed form
// too (FlashAttention over the 576-wide latent keys, SGLang's Triton
// kernels on the L40S), Blackwell's expanded (TensorRT-LLM's MLA kernels);
// decode is absorbed everywhere. A row its kernel_source names Triton for
// is priced as impl=triton.
func peerMLA(context bool) func(r []string, col map[string]int) (ops.Op, error) {
	return func(r []string, col map[string]int) (ops.Op, error) {
		g := func(k string) string { return r[col[k]] }
		kv := "bf16"
		if g("kv_cache_dtype") == "fp8" {
			kv = "fp8"
		}
		impl := ""
		if g("kernel_source") == "triton" {
			impl = " impl=" + ops.ImplTriton
		}
		isl, _ := strconv.Atoi(g("isl"))
		step, _ := strconv.Atoi(g("step"))
		if context {
			form := "absorbed"
			if g("kernel_source") == "trtllm_mla" {
				form = "expanded"
			}
			return ops.Parse(fmt.Sprintf("mla b=%s h=%s s=%d causal kv_dtype=%s %s%s", g("batch_size"), g("num_heads"), isl, kv, form, impl))
		}
		return ops.Parse(fmt.Sprintf("mla b=%s h=%s sq=1 sk=%d kv_dtype=%s absorbed%s", g("batch_size"), g("num_heads"), isl+step, kv, impl))
	}
}

// asMeasured prices op as the tables measured it: warm L2 and the op's
// kernels back to back in a CUDA graph (--l2 warm --launch graph).
func (m *Model) asMeasured(t *testing.T, op ops.Op) (expected, lower float64) {
	p, err := m.Under(Conditions{L2: L2Warm, Launch: LaunchGraph}).Analyze(op)
	if err != nil {
		t.Fatal(err)
	}
	return p.Expected, p.LowerBound
}

type score struct {
	median, p90, above float64
	n                  int
}

func scoreRows(t *testing.T, m *Model, rows []moePeerRow) score {
	var errs []float64
	above := 0
	for _, r := range rows {
		exp, lb := m.asMeasured(t, r.op)
		errs = append(errs, math.Abs(exp-r.measured)/r.measured)
		if lb > r.measured {
			above++
		}
	}
	sort.Float64s(errs)
	return score{errs[len(errs)/2], errs[len(errs)*9/10], float64(above) / float64(len(rows)), len(rows)}
}

// peerBounds are the figures the moe and mla ops reach on each calibration
// GPU (median and 90th-percentile error, share of lower bounds above the
// measured time), as regression bounds. The goals are a median of
// 15%, a p90 of 35% and 1%: where a cell meets them its bounds are the
// goals; elsewhere they are today's figures. Lower bounds meet the goal
// everywhere (none above measured).
var peerBounds = map[string][3]float64{
	"a100_sxm moe":         {0.277, 0.756, 0.01},
	"h100_sxm moe":         moePeerGoal,
	"h100_sxm mla_prefill": moePeerGoal,
	"h100_sxm mla_decode":  moePeerGoal,
	"b200_sxm moe":         {0.205, 0.567, 0.01},
	"b200_sxm mla_prefill": moePeerGoal,
	"b200_sxm mla_decode":  moePeerGoal,
	"l40s moe":             {0.174, 0.443, 0.01},
	"l40s mla_prefill":     moePeerGoal,
	"l40s mla_decode":      {0.193, 0.526, 0.01},
}

var moePeerGoal = [3]float64{0.15, 0.35, 0.01}

// TestPeerCalibration scores the moe and mla ops, priced as the tables were
// measured (warm L2, CUDA-graph launch), against the fastest kernel of every
// configuration the calibration GPUs' tables hold.
func TestPeerCalibration(t *testing.T) {
	for _, gpu := range []string{"a100_sxm", "h100_sxm", "b200_sxm", "l40s"} {
		d, err := devices.Lookup(moePeerGPUs[gpu])
		if err != nil {
			t.Fatal(err)
		}
		m, err := New(d)
		if err != nil {
			t.Fatal(err)
		}
		tables := map[string][]moePeerRow{"moe": readPeer(t, gpu, "moe", peerMoE)}
		if gpu != "a100_sxm" {
			tables["mla_prefill"] = readPeer(t, gpu, "context_mla", peerMLA(true))
			tables["mla_decode"] = readPeer(t, gpu, "generation_mla", peerMLA(false))
		}
		for _, kind := range []string{"moe", "mla_prefill", "mla_decode"} {
			rows, ok := tables[kind]
			if !ok {
				continue
			}
			s := scoreRows(t, m, rows)
			met := s.median <= moePeerGoal[0] && s.p90 <= moePeerGoal[1] && s.above <= moePeerGoal[2]
			t.Logf("%-9s %-12s %5d configurations: median %5.1f%%  p90 %5.1f%%  lower bound above measured %.2f%%  (goal met: %v)",
				gpu, kind, s.n, 100*s.median, 100*s.p90, 100*s.above, met)
			b := peerBounds[gpu+" "+kind]
			if s.median > b[0] || s.p90 > b[1] || s.above > b[2] {
				t.Errorf("%s %s: median %.1f%%, p90 %.1f%%, lower bound above measured in %.2f%% of %d configurations; regressed past %.0f%%, %.0f%%, %.1f%%",
					gpu, kind, 100*s.median, 100*s.p90, 100*s.above, s.n, 100*b[0], 100*b[1], 100*b[2])
			}
		}
	}
}
