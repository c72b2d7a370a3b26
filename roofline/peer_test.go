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

	"github.com/gpucalc/gpucalc/internal/testfile"
	"github.com/gpucalc/gpucalc/ops"
)

// The peer tables (testdata/peer/, made by tools/peer/extract.py) are
// NVIDIA aiconfigurator's per-op timings on the calibration GPUs (A100 SXM,
// H100 SXM, B200, L40S): each op captured in a CUDA graph and replayed with
// no L2 flush, the fastest kernel per configuration, latency in ms.

// peerGPUs maps a table's prefix to the catalog's name of the GPU.
// kOnly says the GPU's attention tables come from aiconfigurator's
// TensorRT-LLM collector, whose KV cache is K-only (CacheType.SELFKONLY):
// its decode steps are priced as such (konly).
var peerGPUs = []struct {
	file, device string
	kOnly        bool
}{
	{"a100_sxm", "a100-sxm4-80gb", true}, {"h100_sxm", "h100-sxm", false}, {"b200_sxm", "b200", false}, {"l40s", "l40s", false},
}

// peerRow is one measured configuration: the op kind it is scored as, the
// op spec gpucalc prices it with, and the measured time in seconds.
type peerRow struct {
	kind, spec string
	measured   float64
}

// peerDTypes maps the tables' data type names to an op spec's.
var peerDTypes = map[string]string{"bfloat16": "bf16", "fp8": "fp8", "float16": "fp16", "half": "fp16"}

// peerRows reads one GPU's table of one op kind and turns each row into an
// op spec. Rows gpucalc has no op for (sliding-window attention) are left
// out; the second result counts them.
func peerRows(t testing.TB, gpu, table string, spec func(get func(string) string) (kind, spec string)) ([]peerRow, int) {
	t.Helper()
	path := "testdata/peer/" + gpu + "_" + table + ".csv.gz"
	recs, err := csv.NewReader(bytes.NewReader(testfile.Gunzip(t, path))).ReadAll()
	if err != nil || len(recs) < 2 {
		t.Fatalf("%s: %v (%d records)", path, err, len(recs))
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	var out []peerRow
	skipped := 0
	for _, r := range recs[1:] {
		get := func(k string) string {
			i, ok := col[k]
			if !ok {
				t.Fatalf("%s: no column %q", path, k)
			}
			return r[i]
		}
		ms, err := strconv.ParseFloat(get("latency_ms"), 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		kind, s := spec(get)
		if s == "" {
			skipped++
			continue
		}
		out = append(out, peerRow{kind, s, ms * 1e-3})
	}
	return out, skipped
}

// gemmSpec prices the tables' GEMMs; quantized, the fp8, fp8_block and
// nvfp4 rows are quantized GEMMs as the engines run them, otherwise (as
// before quant= existed) plain fp8 and fp4 matmuls.
func gemmSpec(quantized bool) func(get func(string) string) (string, string) {
	return func(get func(string) string) (string, string) {
		dt := get("gemm_dtype")
		q := map[string]string{"bfloat16": "dtype=bf16", "fp8": "dtype=fp8", "fp8_block": "dtype=fp8", "nvfp4": "dtype=fp4"}[dt]
		if quantized && dt != "bfloat16" {
			q = "quant=" + dt
		}
		if q == "" {
			return "", ""
		}
		op := "matmul"
		if quantized {
			// The tables time TensorRT-LLM's Linear layer.
			op = "linear"
		}
		return "gemm " + dt, fmt.Sprintf("%s m=%s n=%s k=%s %s", op, get("m"), get("n"), get("k"), q)
	}
}

// attentionSpec is a context (prefill: causal, queries = keys = isl) or
// generation (one query against isl + step keys) row; with engine, as the
// engine's layer (paged, an fp8 KV cache as kv_dtype=), otherwise as the
// plain attention op was priced before either existed; kOnly, a decode
// step over TensorRT-LLM's K-only cache (konly).
func attentionSpec(decode, engine, kOnly bool) func(get func(string) string) (string, string) {
	return func(get func(string) string) (string, string) {
		if get("window_size") != "0" {
			return "", ""
		}
		dt := peerDTypes[get("attn_dtype")]
		isl, _ := strconv.ParseInt(get("isl"), 10, 64)
		kind, seq := "prefill attention", fmt.Sprintf("s=%d causal", isl)
		if decode {
			step, _ := strconv.ParseInt(get("step"), 10, 64)
			kind, seq = "decode attention", fmt.Sprintf("sq=1 sk=%d", isl+step)
		}
		s := fmt.Sprintf("attention b=%s h=%s kv=%s %s d=%s dtype=%s",
			get("batch_size"), get("num_heads"), get("num_key_value_heads"), seq, get("head_dim"), dt)
		if engine {
			s += " paged"
		}
		if engine && decode && kOnly {
			s += " konly"
		}
		if engine && get("kv_cache_dtype") != get("attn_dtype") {
			s += " kv_dtype=" + peerDTypes[get("kv_cache_dtype")]
		}
		if engine && get("kernel_source") == "triton" {
			// SGLang's Triton backend ran the row.
			s += " impl=triton"
		}
		return kind, s
	}
}

// ncclSpec is an all-reduce of message_size fp16 elements as NCCL's own
// collective (impl=nccl: the tables are nccl-tests'); the tables' other
// collectives are not scored.
func ncclSpec(get func(string) string) (string, string) {
	if get("op_name") != "all_reduce" {
		return "", ""
	}
	n, _ := strconv.ParseInt(get("message_size"), 10, 64)
	kind := "all-reduce < 1 MiB"
	if 2*n >= 1<<20 {
		kind = "all-reduce ≥ 1 MiB"
	}
	return kind, fmt.Sprintf("allreduce n=%d ranks=%s dtype=fp16 impl=nccl", n, get("num_gpus"))
}

// peerScore is one GPU × op kind's figures: the median and p90 of
// |expected − measured| / measured, the signed median, and the share of
// rows whose lower bound is more than 2% above the measured time, with the
// worst of those rows (lower bound / measured, highest first).
type peerScore struct {
	gpu, kind         string
	n                 int
	median, p90, sign float64
	lowAbove          float64
	worst             []string
}

// peerWorst is how many rows with a lower bound above the measured time a
// cell keeps for the log.
const peerWorst = 5

// scorePeer prices every row of every calibration table with time (the
// expected time under the conditions being scored) and returns the
// figures per GPU × op kind, in a fixed order.
func scorePeer(t *testing.T, cond Conditions, quantized bool) []peerScore {
	t.Helper()
	var out []peerScore
	for _, g := range peerGPUs {
		m := mustNew(t, device(t, g.device)).Under(cond)
		byKind := map[string][]peerRow{}
		var kinds []string
		for _, tb := range []struct {
			table string
			spec  func(func(string) string) (string, string)
		}{{"gemm", gemmSpec(quantized)}, {"context_attention", attentionSpec(false, quantized, g.kOnly)}, {"generation_attention", attentionSpec(true, quantized, g.kOnly)}, {"nccl", ncclSpec}} {
			rows, _ := peerRows(t, g.file, tb.table, tb.spec)
			for _, r := range rows {
				if byKind[r.kind] == nil {
					kinds = append(kinds, r.kind)
				}
				byKind[r.kind] = append(byKind[r.kind], r)
			}
		}
		sort.Strings(kinds)
		for _, k := range kinds {
			var abs, signed []float64
			type aboveRow struct {
				ratio float64
				line  string
			}
			var above []aboveRow
			for _, r := range byKind[k] {
				o, err := ops.Parse(r.spec)
				if err != nil {
					t.Fatalf("%s: %v", g.file, err)
				}
				p, err := m.Analyze(o)
				if err != nil {
					t.Fatalf("%s %s: %v", g.device, r.spec, err)
				}
				e := (p.Expected - r.measured) / r.measured
				abs, signed = append(abs, math.Abs(e)), append(signed, e)
				if p.LowerBound > 1.02*r.measured {
					above = append(above, aboveRow{p.LowerBound / r.measured, fmt.Sprintf("%s: measured %.1f µs, lower bound %.1f µs (%.2f×), %.0f MB at %.0f GB/s",
						r.spec, 1e6*r.measured, 1e6*p.LowerBound, p.LowerBound/r.measured, p.Bytes/1e6, p.Bytes/r.measured/1e9)})
				}
			}
			sort.Float64s(abs)
			sort.Float64s(signed)
			sort.SliceStable(above, func(i, j int) bool { return above[i].ratio > above[j].ratio })
			var worst []string
			for _, a := range above[:min(len(above), peerWorst)] {
				worst = append(worst, a.line)
			}
			out = append(out, peerScore{gpu: g.file, kind: k, n: len(abs), median: nearestRank(abs, 0.5), p90: nearestRank(abs, 0.9),
				sign: nearestRank(signed, 0.5), lowAbove: float64(len(above)) / float64(len(abs)), worst: worst})
		}
	}
	return out
}

func logPeer(t *testing.T, title string, s []peerScore) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%-9s %-20s %5s %8s %8s %8s %10s\n", title, "gpu", "op kind", "rows", "median", "p90", "signed", "LB>1.02")
	for _, x := range s {
		fmt.Fprintf(&b, "%-9s %-20s %5d %7.1f%% %7.1f%% %+7.1f%% %9.1f%%\n", x.gpu, x.kind, x.n, 100*x.median, 100*x.p90, 100*x.sign, 100*x.lowAbove)
	}
	t.Log(b.String())
}

// peerDefault is the default condition's figures (median and p90 of
// |error|, in %), recorded when GEMMs on Hopper and Blackwell became
// stream-K (no wave tail) and all-reduces took their link kind's fit
// (NVLS on the H100's and B200's switches since), then with a split-K
// GEMM's reduction kernel and up to splitKWaves waves of split CTAs.
var peerDefault = map[string][2]float64{
	"a100_sxm all-reduce < 1 MiB": {5.3, 19.3},
	"a100_sxm all-reduce ≥ 1 MiB": {4.9, 14.3},
	"a100_sxm decode attention":   {60.5, 91.6},
	"a100_sxm gemm bfloat16":      {9.8, 33.3},
	"a100_sxm prefill attention":  {38.0, 70.8},
	"h100_sxm all-reduce < 1 MiB": {3.8, 12.4},
	"h100_sxm all-reduce ≥ 1 MiB": {3.4, 12.8},
	"h100_sxm decode attention":   {53.1, 78.9},
	"h100_sxm gemm bfloat16":      {10.4, 69.7},
	"h100_sxm gemm fp8":           {44.8, 63.5},
	"h100_sxm gemm fp8_block":     {26.8, 58.6},
	"h100_sxm prefill attention":  {45.4, 70.6},
	"b200_sxm all-reduce < 1 MiB": {1.6, 4.8},
	"b200_sxm all-reduce ≥ 1 MiB": {5.6, 18.9},
	"b200_sxm decode attention":   {58.1, 79.8},
	"b200_sxm gemm bfloat16":      {14.2, 108.7},
	"b200_sxm gemm fp8":           {58.2, 69.7},
	"b200_sxm gemm fp8_block":     {23.1, 47.7},
	"b200_sxm gemm nvfp4":         {47.6, 74.0},
	"b200_sxm prefill attention":  {58.9, 84.4},
	"l40s all-reduce < 1 MiB":     {7.9, 35.6},
	"l40s all-reduce ≥ 1 MiB":     {7.5, 13.4},
	"l40s decode attention":       {44.3, 172.4},
	"l40s gemm bfloat16":          {25.0, 160.8},
	"l40s gemm fp8":               {22.9, 55.8},
	"l40s gemm fp8_block":         {39.4, 68.2},
	"l40s prefill attention":      {33.0, 65.6},
}

// TestPeerDefault scores the default figures (cold L2, eager launch) of
// today's ops (fp8 blocks and nvfp4 as plain fp8 and fp4 matmuls) against
// the peer tables. The tables were measured warm in CUDA graphs, so these
// figures say how far the default condition is from a serving engine's,
// not how good the model is; the test holds them where they were
// recorded, so the defaults move only on purpose.
func TestPeerDefault(t *testing.T) {
	s := scorePeer(t, Conditions{}, false)
	logPeer(t, "cold L2, eager launch (defaults) against aiconfigurator's warm CUDA-graph tables", s)
	if len(s) != len(peerDefault) {
		t.Errorf("%d GPU × op kind cells, want %d", len(s), len(peerDefault))
	}
	for _, x := range s {
		want, ok := peerDefault[x.gpu+" "+x.kind]
		if !ok || math.Abs(100*x.median-want[0]) > 0.06 || math.Abs(100*x.p90-want[1]) > 0.06 {
			t.Errorf("%s %s: median %.1f%%, p90 %.1f%%; the default condition gave %v", x.gpu, x.kind, 100*x.median, 100*x.p90, want)
		}
	}
}

// peerWarmGraph is what gpucalc reaches under the tables' conditions
// (median and p90 of |error|, share of lower bounds more than 2% above the
// measured time, in percent, rounded up), recorded with linear layers'
// weights read from DRAM, stream-K GEMMs, the quantized activation path's
// fixed cost, paged attention's per-CTA and fp8-KV costs and the
// all-reduce fits by link kind; then with NVLS on NVLink 4 and 5 switches,
// the engines' attention products at a fraction of the GEMM rate per
// family and data type, Hopper's engine kernels overlapping softmax with
// the products, the cache append spread over its tokens, Blackwell's
// query cast to an fp8 cache's type, and the A100's and L40S's layer
// fixed cost refitted; then with TensorRT-LLM's generic masked decode
// kernel on the A100 (a CTA per query head where XQA does not run: a
// group of one, or of more than 32 query heads per KV head) and XQA's
// CTA time growing with its 16-row tiles, and Blackwell's decode steps
// over a cache of the compute type with their own fixed cost; then with
// Ada's linears reading a weight from L2 where the collector's copies of it
// fit there, at Ada's own L2 rate; then with Ada's GEMM kernels reading
// a warm L2 at their own rate (the L40 probe at the H100's GEMM-to-probe
// ratio) and Ada's paged layers over a cache of the compute type at their
// own fixed cost; then with the A100's decode steps over its collector's
// K-only cache, a split-K GEMM's reduction kernel (up to splitKWaves
// waves of split CTAs, the A100's and B200's ramps refitted), and the
// A100's decode steps with their own fixed cost; then with the rows SGLang's
// Triton backend ran (the tables' kernel_source) priced as its Triton
// kernels tile them (impl=triton); then with XQA's key splits as its
// multi-block heuristic sets them (A100 decode 15.1/37.4 → 13.5/33.6).
// A cell that
// met the goal is held to the goal; every other cell to its
// figures (0.5 points of slack).
//
// The A100's decode steps are priced over the K-only cache its
// TensorRT-LLM collector builds (konly: CacheType.SELFKONLY points V's
// block offsets at K's blocks); over distinct K and V, 5.7% of its rows
// had a lower bound above the measured time (0.27–4.3 GB of K and V read
// at up to 1.69× the A100's DRAM bandwidth), and the cell was 16.5/38.2.
//
// The B200's decode rows at head dims 192 and 256 that run far slower
// than the split-KV price (224
// of the ~1000 rows over 20 MB run below 1 TB/s, 40–80 GB/s per
// sequence × KV head: one CTA each, unsplit) follow no shape a kernel's
// heuristic could choose: b=1 kv=1 d=256 bf16 runs at 82 GB/s with h=4
// and 2.5 TB/s with h=8 over 65536 keys, and at 61 GB/s with h=8 over
// 131072 keys. The split-KV price already holds at every head dim; a fit
// to those rows would be a fit per row.
var peerWarmGraph = map[string][3]float64{
	"a100_sxm all-reduce < 1 MiB": {5.35, 19.35, 0.05},
	"a100_sxm all-reduce ≥ 1 MiB": {4.95, 14.35, 0.05},
	"a100_sxm decode attention":   {13.55, 33.65, 0.05},
	"a100_sxm gemm bfloat16":      {8.65, 23.65, 0.05},
	"a100_sxm prefill attention":  {5.95, 31.95, 0.05},
	"h100_sxm all-reduce < 1 MiB": {3.85, 12.45, 0.05},
	"h100_sxm all-reduce ≥ 1 MiB": {3.45, 12.85, 0.05},
	"h100_sxm decode attention":   {13.9, 34.65, 0.05},
	"h100_sxm gemm bfloat16":      {6.85, 20.55, 0.05},
	"h100_sxm gemm fp8":           {5.25, 19.35, 0.05},
	"h100_sxm gemm fp8_block":     {13.45, 33.75, 0.05},
	"h100_sxm prefill attention":  {10.0, 32.45, 0.05},
	"b200_sxm all-reduce < 1 MiB": {1.65, 4.85, 0.05},
	"b200_sxm all-reduce ≥ 1 MiB": {5.65, 18.95, 0.05},
	"b200_sxm decode attention":   {12.55, 43.2, 0.05},
	"b200_sxm gemm bfloat16":      {9.15, 25.75, 0.05},
	"b200_sxm gemm fp8":           {5.95, 15.45, 0.05},
	"b200_sxm gemm fp8_block":     {6.25, 20.05, 0.05},
	"b200_sxm gemm nvfp4":         {9.05, 20.55, 0.05},
	"b200_sxm prefill attention":  {16.65, 39.95, 0.05},
	"l40s all-reduce < 1 MiB":     {7.95, 35.65, 0.05},
	"l40s all-reduce ≥ 1 MiB":     {7.55, 13.45, 0.05},
	"l40s decode attention":       {14.35, 44.15, 0.05},
	"l40s gemm bfloat16":          {12.15, 32.35, 0.05},
	"l40s gemm fp8":               {7.25, 19.45, 0.05},
	"l40s gemm fp8_block":         {9.35, 30.45, 0.05},
	"l40s prefill attention":      {12.7, 33.15, 0.05},
}

// peerGoal is the goal for an op kind: median and p90 of |error|,
// in percent.
func peerGoal(kind string) (median, p90 float64, ok bool) {
	switch kind {
	case "gemm bfloat16", "gemm fp8", "all-reduce ≥ 1 MiB":
		return 10, 25, true
	case "gemm fp8_block", "gemm nvfp4", "prefill attention", "decode attention":
		return 15, 35, true
	}
	return 0, 0, false
}

// TestPeerWarmGraph scores gpucalc under the tables' own conditions (a
// warm L2, kernels replayed in a CUDA graph), quantized GEMMs as the
// engines run them and attention as the engines' paged layer, against
// aiconfigurator's calibration tables: no cell may fall behind what was
// recorded, and how many cells meet the goals is logged.
func TestPeerWarmGraph(t *testing.T) {
	s := scorePeer(t, Conditions{L2: L2Warm, Launch: LaunchGraph}, true)
	logPeer(t, "warm L2, CUDA-graph replay against aiconfigurator's tables", s)
	for _, x := range s {
		if len(x.worst) > 0 {
			t.Logf("%s %s: lower bound more than 2%% above the measured time, worst rows:\n  %s", x.gpu, x.kind, strings.Join(x.worst, "\n  "))
		}
	}
	if len(s) != len(peerWarmGraph) {
		t.Errorf("%d GPU × op kind cells, want %d", len(s), len(peerWarmGraph))
	}
	met, goals, recorded := 0, 0, 0
	for _, x := range s {
		want, ok := peerWarmGraph[x.gpu+" "+x.kind]
		got := [3]float64{100 * x.median, 100 * x.p90, 100 * x.lowAbove}
		limit := [3]float64{want[0] + 0.5, want[1] + 0.5, want[2] + 0.5}
		gm, gp, hasGoal := peerGoal(x.kind)
		if hasGoal && want[0] <= gm && want[1] <= gp && want[2] <= 1 {
			// A cell that met its goal when recorded is held to the goal.
			limit, recorded = [3]float64{gm, gp, 1}, recorded+1
		}
		for i := range got {
			if !ok || got[i] > limit[i] {
				t.Errorf("%s %s: median %.1f%%, p90 %.1f%%, lower bounds above %.1f%%; held to %v", x.gpu, x.kind, got[0], got[1], got[2], limit)
				break
			}
		}
		if hasGoal {
			goals++
			if got[0] <= gm && got[1] <= gp && got[2] <= 1 {
				met++
			}
		}
	}
	t.Logf("%d of %d GPU × op kind cells meet the issue's goals", met, goals)
	if met < recorded {
		t.Errorf("%d cells meet the goals; %d did when recorded", met, recorded)
	}
}

// TestPeerGenericDecode checks the A100's decode steps that TensorRT-LLM's
// XQA kernel leaves to its generic masked kernel (one query head per KV
// head, or more than 32), priced as a CTA per query head: before, they
// were priced 32% slow (one head per KV head) and 86% fast (48 and more)
// at the median. Each group's median |error| is held where it was
// recorded (12.6% and 14.3% over the collector's K-only cache with
// Ampere's decode fixed cost, 0.5 points of slack).
func TestPeerGenericDecode(t *testing.T) {
	m := mustNew(t, device(t, "a100-sxm4-80gb")).Under(Conditions{L2: L2Warm, Launch: LaunchGraph})
	rows, _ := peerRows(t, "a100_sxm", "generation_attention", attentionSpec(true, true, true))
	errs := map[string][]float64{}
	for _, r := range rows {
		o, err := ops.Parse(r.spec)
		if err != nil {
			t.Fatal(err)
		}
		g := o.Heads / o.KVHeads
		if g != 1 && g <= 32 {
			continue
		}
		p, err := m.Analyze(o)
		if err != nil {
			t.Fatalf("%s: %v", r.spec, err)
		}
		k := "one query head per KV head"
		if g > 32 {
			k = "over 32 query heads per KV head"
		}
		errs[k] = append(errs[k], math.Abs(p.Expected-r.measured)/r.measured)
	}
	for k, want := range map[string]float64{"one query head per KV head": 13.1, "over 32 query heads per KV head": 14.8} {
		e := errs[k]
		if len(e) < 500 {
			t.Fatalf("%s: %d rows, want at least 500", k, len(e))
		}
		sort.Float64s(e)
		if got := 100 * nearestRank(e, 0.5); got > want {
			t.Errorf("%s: median |error| %.1f%% over %d rows, held to %.1f%%", k, got, len(e), want)
		} else {
			t.Logf("%s: median |error| %.1f%% over %d rows", k, got, len(e))
		}
	}
}

// peerTriton is, per GPU and op kind, the median and p90 of |error| (in
// %, rounded up) over the rows SGLang's Triton backend ran, priced as its
// Triton kernels (impl=triton), recorded when they came.
var peerTriton = map[string][2]float64{
	"h100_sxm prefill attention": {33.55, 59.55},
	"h100_sxm decode attention":  {26.25, 59.95},
	"b200_sxm prefill attention": {16.65, 60.55},
	"b200_sxm decode attention":  {29.25, 56.05},
	"l40s prefill attention":     {16.55, 34.15},
	"l40s decode attention":      {21.05, 40.45},
}

// TestPeerTriton checks the rows whose kernel_source is SGLang's Triton
// attention backend (L40S head dims 64 and 192, H100 512, B200 192 and
// 256) priced as its Triton kernels: each cell is held to its recorded
// figures (0.5 points of slack) and must beat the same rows priced as
// the family's engine kernels (no impl=), which put them 30–70% fast at
// prefill.
func TestPeerTriton(t *testing.T) {
	cond := Conditions{L2: L2Warm, Launch: LaunchGraph}
	for _, g := range peerGPUs {
		m := mustNew(t, device(t, g.device)).Under(cond)
		for _, decode := range []bool{false, true} {
			table, spec := "context_attention", attentionSpec(decode, true, g.kOnly)
			if decode {
				table = "generation_attention"
			}
			rows, _ := peerRows(t, g.file, table, func(get func(string) string) (string, string) {
				if get("kernel_source") != "triton" {
					return "", ""
				}
				return spec(get)
			})
			if len(rows) == 0 {
				continue
			}
			key := g.file + " " + rows[0].kind
			want, ok := peerTriton[key]
			if !ok {
				t.Errorf("%s: %d Triton rows and no recorded figures", key, len(rows))
				continue
			}
			var triton, engine []float64
			for _, r := range rows {
				for _, x := range []struct {
					spec string
					errs *[]float64
				}{{r.spec, &triton}, {strings.TrimSuffix(r.spec, " impl=triton"), &engine}} {
					o, err := ops.Parse(x.spec)
					if err != nil {
						t.Fatal(err)
					}
					p, err := m.Analyze(o)
					if err != nil {
						t.Fatalf("%s: %v", x.spec, err)
					}
					*x.errs = append(*x.errs, math.Abs(p.Expected-r.measured)/r.measured)
				}
			}
			sort.Float64s(triton)
			sort.Float64s(engine)
			got := [2]float64{100 * nearestRank(triton, 0.5), 100 * nearestRank(triton, 0.9)}
			was := [2]float64{100 * nearestRank(engine, 0.5), 100 * nearestRank(engine, 0.9)}
			t.Logf("%s: %d Triton rows, median %.1f%% p90 %.1f%% (as the engine's kernels: %.1f%%, %.1f%%)", key, len(rows), got[0], got[1], was[0], was[1])
			if got[0] > want[0]+0.5 || got[1] > want[1]+0.5 {
				t.Errorf("%s: median %.1f%%, p90 %.1f%%; held to %v", key, got[0], got[1], want)
			}
			if got[0] >= was[0] || got[1] >= was[1] {
				t.Errorf("%s: Triton pricing %.1f%% (%.1f%%) no better than the engine kernels' %.1f%% (%.1f%%)", key, got[0], got[1], was[0], was[1])
			}
		}
	}
}
