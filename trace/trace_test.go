package trace

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/testfile"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/review"
	"github.com/gpucalc/gpucalc/roofline"
)

// The two traces recorded on an H100 (see testdata/README.md).
var traces = []string{"testdata/trace_llama1b_infer.json.gz", "testdata/trace_resnet50_train.json.gz"}

func read(t testing.TB, file string) *Trace {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := Read(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return tr
}

func analyze(t testing.TB, tr *Trace) Analysis {
	t.Helper()
	d, err := devices.Lookup(tr.DeviceName())
	if err != nil {
		t.Fatal(err)
	}
	m, err := roofline.New(d)
	if err != nil {
		t.Fatal(err)
	}
	arch, err := Arch(tr, d)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Analyze(tr, m, arch)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// rawKernelTime sums the kernel events' durations with a decode of its own.
func rawKernelTime(t *testing.T, file string) float64 {
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	decodeGz(t, file, &doc)
	var sum float64
	for _, e := range doc.TraceEvents {
		if e["cat"] == "kernel" {
			sum += e["dur"].(float64) * 1e-6
		}
	}
	return sum
}

func decodeGz(t *testing.T, file string, v any) {
	t.Helper()
	if err := json.Unmarshal(testfile.Gunzip(t, file), v); err != nil {
		t.Fatal(err)
	}
}

// Per-op plus unattributed time is the total kernel time, summed from the
// raw events.
func TestNothingLost(t *testing.T) {
	for _, file := range traces {
		a := analyze(t, read(t, file))
		want := rawKernelTime(t, file)
		var ops float64
		for _, r := range a.Ops {
			ops += r.Measured
		}
		got := ops + a.Summary.UnattributedTime
		if math.Abs(got-want) > 0.001*want {
			t.Errorf("%s: ops %.6g s + unattributed %.6g s = %.6g s, kernel events sum to %.6g s", file, ops, a.Summary.UnattributedTime, got, want)
		}
		if math.Abs(a.Summary.KernelTime-want) > 0.001*want || a.Summary.Balance() > 0.001 {
			t.Errorf("%s: summary kernel time %.6g s (balance %.3g), events %.6g s", file, a.Summary.KernelTime, a.Summary.Balance(), want)
		}
	}
}

// Every aten::mm, addmm and bmm in both traces, nested or not, costs
// 2·M·N·K from its input dims.
func TestMatmulFLOPs(t *testing.T) {
	n := 0
	for _, file := range traces {
		tr := read(t, file)
		for i := range tr.Ops.Len() {
			o := tr.Ops.At(i)
			var a, b []int64
			switch o.Name {
			case "aten::mm", "aten::bmm":
				a, b = o.Inputs[0].Dims, o.Inputs[1].Dims
			case "aten::addmm":
				a, b = o.Inputs[1].Dims, o.Inputs[2].Dims
			default:
				continue
			}
			n++
			m, k, nn := a[len(a)-2], a[len(a)-1], b[len(b)-1]
			want := 2 * float64(m*nn*k)
			if len(a) == 3 {
				want *= float64(a[0])
			}
			ms, err := model(call{op: o})
			if err != nil {
				t.Fatalf("%s %s: %v", file, o.Name, err)
			}
			if got := ms[0].Cost().MatrixFLOPs; got != want {
				t.Errorf("%s %s %v %v: %g FLOPs, want 2·M·N·K = %g", file, o.Name, a, b, got, want)
			}
		}
	}
	if n == 0 {
		t.Fatal("no matmuls in the traces")
	}
}

// The Hopper GEMMs and the cuDNN flash-attention kernel run one block of
// 384 threads at 168 registers with over 100 KiB of shared memory: 12 of 64
// warps, limited by both; the trace's own estimate reads 0.
func TestHopperOccupancy(t *testing.T) {
	seen := 0
	for _, file := range traces {
		a := analyze(t, read(t, file))
		for _, k := range a.Kernels {
			if !strings.HasPrefix(k.Name, "nvjet_sm90_") && !strings.Contains(k.Name, "sdpa_sm90_flash") {
				continue
			}
			seen++
			if k.Occupancy != 18.75 || k.BlocksPerSM != 1 || k.Limiters != occupancy.LimitRegisters|occupancy.LimitSharedMemory {
				t.Errorf("%s: %.2f%%, %d blocks, limited by %s; want 18.75%%, 1 block, registers, shared memory",
					k.Name, k.Occupancy, k.BlocksPerSM, k.Limiters)
			}
			if k.TraceEstimate == nil || *k.TraceEstimate != 0 || !k.Disagrees {
				t.Errorf("%s: trace estimate %v, disagrees %v; the trace reads 0", k.Name, k.TraceEstimate, k.Disagrees)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no nvjet_sm90 or cuDNN flash kernels found")
	}
}

// rawOp is a cpu_op as the independent decode below keeps it.
type rawOp struct {
	name, tid    string
	ts, end, ext float64
	dims         []any
}

// The Llama trace's per-op table against one derived here from the raw
// JSON: each kernel's op by External id, its outermost enclosing aten op on
// the same thread by time spans, grouped by name and input dims. Calls,
// kernels and measured time must match every row; linear's FLOPs and ideal
// bytes must be 2·M·N·K and bf16 operands read and written once.
func TestLlamaOpTable(t *testing.T) {
	const file = "testdata/trace_llama1b_infer.json.gz"
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	decodeGz(t, file, &doc)
	var cpu []rawOp
	byExt := map[float64]int{}
	for _, e := range doc.TraceEvents {
		if e["cat"] != "cpu_op" {
			continue
		}
		args := e["args"].(map[string]any)
		ts, dur := e["ts"].(float64), e["dur"].(float64)
		o := rawOp{name: e["name"].(string), tid: jsonString(e["tid"]), ts: ts, end: ts + dur, ext: args["External id"].(float64)}
		o.dims, _ = args["Input Dims"].([]any)
		byExt[o.ext] = len(cpu)
		cpu = append(cpu, o)
	}
	type agg struct {
		calls, kernels int
		time           float64
		dims           []any
	}
	want := map[string]*agg{}
	callSeen := map[int]bool{}
	for _, e := range doc.TraceEvents {
		if e["cat"] != "kernel" {
			continue
		}
		args := e["args"].(map[string]any)
		i, ok := byExt[args["External id"].(float64)]
		if !ok {
			t.Fatalf("kernel %v has no op", e["name"])
		}
		top := -1
		for j, o := range cpu {
			if o.tid == cpu[i].tid && strings.HasPrefix(o.name, "aten::") && o.ts <= cpu[i].ts && o.end+0.002 >= cpu[i].end &&
				(top < 0 || o.end-o.ts > cpu[top].end-cpu[top].ts) {
				top = j
			}
		}
		if top < 0 {
			t.Fatalf("kernel %v outside any aten op", e["name"])
		}
		key := cpu[top].name + " " + dimString(cpu[top].dims)
		g := want[key]
		if g == nil {
			g = &agg{dims: cpu[top].dims}
			want[key] = g
		}
		g.kernels++
		g.time += e["dur"].(float64) * 1e-6
		if !callSeen[top] {
			callSeen[top] = true
			g.calls++
		}
	}
	a := analyze(t, read(t, file))
	got := map[string]*agg{}
	flops := map[string]float64{}
	bytes := map[string]float64{}
	for _, r := range a.Ops {
		key := r.Name + " " + r.Shapes
		g := got[key]
		if g == nil {
			g = &agg{}
			got[key] = g
		}
		g.calls += r.Calls
		g.kernels += r.Kernels
		g.time += r.Measured
		flops[key] += r.FLOPs
		bytes[key] += r.Bytes
	}
	if len(got) != len(want) {
		t.Errorf("%d op rows, the raw events give %d", len(got), len(want))
	}
	linear := 0
	for key, w := range want {
		g := got[key]
		if g == nil {
			t.Errorf("%s: missing", key)
			continue
		}
		if g.calls != w.calls || g.kernels != w.kernels || math.Abs(g.time-w.time) > 1e-9 {
			t.Errorf("%s: %d calls, %d kernels, %.9f s; raw events give %d, %d, %.9f s", key, g.calls, g.kernels, g.time, w.calls, w.kernels, w.time)
		}
		if !strings.HasPrefix(key, "aten::linear ") {
			continue
		}
		linear++
		x, wt := ints(w.dims[0]), ints(w.dims[1])
		m := float64(1)
		for _, v := range x[:len(x)-1] {
			m *= float64(v)
		}
		k, n := float64(x[len(x)-1]), float64(wt[0])
		if f := 2 * m * n * k * float64(w.calls); flops[key] != f {
			t.Errorf("%s: %g FLOPs, want 2·M·N·K·calls = %g", key, flops[key], f)
		}
		if b := 2 * (m*k + k*n + m*n) * float64(w.calls); bytes[key] != b {
			t.Errorf("%s: %g bytes, want bf16 A, B and C once = %g", key, bytes[key], b)
		}
	}
	if linear == 0 {
		t.Error("no linear rows")
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// dimString writes the tensors' dims as the report does: "[1,2048] [8,2]".
func dimString(dims []any) string {
	var parts []string
	for _, d := range dims {
		l, _ := d.([]any)
		if len(l) == 0 {
			continue
		}
		parts = append(parts, strings.ReplaceAll(jsonString(l), " ", ""))
	}
	return strings.Join(parts, " ")
}

func ints(v any) []int64 {
	var out []int64
	for _, x := range v.([]any) {
		out = append(out, int64(x.(float64)))
	}
	return out
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// A small trace: one op with shapes, one kernel launched by it.
const small = `{"deviceProperties":[{"name":"NVIDIA H100 80GB HBM3","computeMajor":9,"computeMinor":0}],"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":20,"args":{"External id":1,"Input Dims":[[64,64],[64,64]],"Input type":["c10::BFloat16","c10::BFloat16"]}},
{"ph":"X","cat":"cuda_runtime","name":"LAUNCH","pid":1,"tid":1,"ts":12,"dur":5,"args":{"External id":1,"correlation":7}},
{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":40,"dur":3,"args":{"External id":1,"correlation":7,"stream":7,"grid":[1,1,1],"block":[128,1,1],"registers per thread":32,"shared memory":0}}]}`

func TestReadErrors(t *testing.T) {
	llama := testfile.Gunzip(t, traces[0])
	gzLlama, _ := os.ReadFile(traces[0])
	noShapes := strings.ReplaceAll(small, `"Input Dims":[[64,64],[64,64]],`, "")
	cases := []struct {
		name, in, want string
		is             error
	}{
		{"another tool's object", `{"traceEvents":[{"ph":"X","cat":"function","name":"main","pid":1,"tid":1,"ts":1,"dur":2}]}`, "no cpu_op or kernel events", ErrNotTorch},
		{"array form", `[{"ph":"X","name":"main","ts":1,"dur":2}]`, "array form", ErrNotTorch},
		{"no traceEvents", `{"foo":1}`, "no traceEvents", ErrNotTorch},
		{"not JSON", `hello`, "not valid JSON", nil},
		{"without shapes", noShapes, "record_shapes=True", ErrNoShapes},
		{"CPU only", strings.Replace(small, `"cat":"kernel"`, `"cat":"python"`, 1), "no GPU kernels", nil},
		{"truncated", string(llama[:len(llama)/2]), "truncated", nil},
		{"truncated gzip", string(gzLlama[:len(gzLlama)/2]), "truncated", nil},
		{"gzip of text", string(gz([]byte("hello, world"))), "gzip holds no JSON trace", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one line with %q", err, c.want)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%v is not %v", err, c.is)
			}
		})
	}
}

// The small trace works gzipped or not, and with PyTorch 1.8's names.
// Kernels replayed from a CUDA graph link only to cudaGraphLaunch: when
// every kernel is one, the analysis says so.
func TestSmallTrace(t *testing.T) {
	for _, in := range []string{small, string(gz([]byte(small)))} {
		tr, err := Read(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		a := analyze(t, tr)
		if len(a.Ops) != 1 || a.Ops[0].Calls != 1 || a.Ops[0].FLOPs != 2*64*64*64 || a.Ops[0].Measured != 3e-6 {
			t.Fatalf("small trace: %+v", a.Ops)
		}
	}
	// PyTorch 1.8's category names and lower-case "external id".
	old := strings.NewReplacer(`"cat":"cpu_op"`, `"cat":"Operator"`, `"cat":"kernel"`, `"cat":"Kernel"`, `"cat":"cuda_runtime"`, `"cat":"Runtime"`, `"External id"`, `"external id"`).Replace(small)
	tr, err := Read(strings.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	if a := analyze(t, tr); len(a.Ops) != 1 || a.Ops[0].Name != "aten::mm" || a.Ops[0].Measured != 3e-6 {
		t.Fatalf("PyTorch 1.8 names: %+v", a.Ops)
	}
	// Damaged dims leave the op unmodelled, its time kept.
	for _, dims := range []string{`[[-64,64],[64,64]]`, `[[0,64],[64,64]]`, `[[4000000000,4000000000],[4000000000,64]]`} {
		tr, err := Read(strings.NewReader(strings.Replace(small, `[[64,64],[64,64]]`, dims, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if a := analyze(t, tr); a.Ops[0].Modelled() || a.Ops[0].Measured != 3e-6 {
			t.Errorf("dims %s: %+v", dims, a.Ops[0])
		}
	}
	tr, err = Read(strings.NewReader(strings.Replace(small, "LAUNCH", "cudaGraphLaunch", 1)))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := devices.Lookup("h100")
	m, _ := roofline.New(d)
	arch, _ := Arch(tr, d)
	if _, err := Analyze(tr, m, arch); err == nil || !strings.Contains(err.Error(), "cudaGraphLaunch") {
		t.Fatalf("got %v, want a CUDA graph error", err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(small))
	f.Add(gz([]byte(small)))
	f.Add([]byte(`{"traceEvents":[{"ph":"X","cat":"cpu_op","args":{"Input Dims":[[[1,2],[3]],[]]}}]}`))
	f.Add([]byte(`[1,2]`))
	rank0, err := os.ReadFile("testdata/ranks/rank0.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(rank0)
	f.Add(testfile.Gunzip(f, traces[0])[:30000])
	f.Add(testfile.Gunzip(f, traces[1])[:30000])
	d, err := devices.Lookup("h100")
	if err != nil {
		f.Fatal(err)
	}
	m, err := roofline.New(d)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var tr *Trace
		var err error
		if n := allocatedLive(func() { tr, err = Read(bytes.NewReader(b)) }); n > 64<<20+1000*uint64(len(b)) {
			t.Fatalf("%d bytes of input allocated %d MiB", len(b), n>>20)
		}
		if tr != nil && (err == nil || errors.Is(err, ErrNoShapes)) {
			// The ranks' analysis takes traces without shapes too.
			rs, err := AnalyzeRanks([]RankTrace{{Name: "a", Trace: tr}, {Name: "b", Trace: tr}}, m)
			if err == nil {
				for _, r := range rs.Ranks {
					if math.Abs(r.Compute+r.Exposed+r.Idle-r.Window) > 1e-6*max(r.Window, 1) {
						t.Fatalf("rank %d: compute %g + exposed %g + idle %g != window %g", r.Rank, r.Compute, r.Exposed, r.Idle, r.Window)
					}
				}
			}
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of several lines: %q", err)
			}
			return
		}
		arch, err := Arch(tr, d)
		if err != nil {
			return
		}
		Analyze(tr, m, arch)
	})
}

// BenchmarkAnalyze50MB reads and analyses a 50 MB trace: the Llama trace's
// events repeated to that size. It reports the peak heap in use, sampled
// during the run, as a multiple of the file size (target: at most 4) and
// the seconds per trace (target: at most 1).
func BenchmarkAnalyze50MB(b *testing.B) {
	raw := testfile.Gunzip(b, traces[0])
	i := bytes.Index(raw, []byte(`"traceEvents": [`))
	j := bytes.LastIndex(raw, []byte("]"))
	if i < 0 || j < 0 {
		b.Fatal("unexpected layout")
	}
	head, body, tail := raw[:i+len(`"traceEvents": [`)], bytes.TrimSpace(raw[i+len(`"traceEvents": [`):j]), raw[j:]
	var buf bytes.Buffer
	buf.Write(head)
	for n := 0; buf.Len() < 50<<20; n++ {
		if n > 0 {
			buf.WriteByte(',')
		}
		buf.Write(body)
	}
	buf.Write(tail)
	data := buf.Bytes()
	d, _ := devices.Lookup("h100")
	m, _ := roofline.New(d)
	var peak uint64
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapInuse
		done := make(chan struct{})
		go func() {
			var ms runtime.MemStats
			for {
				select {
				case <-done:
					return
				case <-time.After(5 * time.Millisecond):
					runtime.ReadMemStats(&ms)
					if ms.HeapInuse > base {
						peak = max(peak, ms.HeapInuse-base)
					}
				}
			}
		}()
		tr, err := Read(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		arch, _ := Arch(tr, d)
		if _, err := Analyze(tr, m, arch); err != nil {
			b.Fatal(err)
		}
		close(done)
	}
	b.ReportMetric(float64(peak)/float64(len(data)), "peak-heap/file")
	b.ReportMetric(float64(len(data))/1e6, "file-MB")
}

// Ops priced from their recorded arguments, by hand: kind and size.
func TestModel(t *testing.T) {
	bf := "c10::BFloat16"
	cases := []struct {
		name     string
		dims     string
		types    []string
		concrete []string
		want     ops.Op
	}{
		{"aten::linear", `[[8,1,2048],[512,2048],[512]]`, []string{bf, bf, bf}, nil,
			ops.Op{Kind: ops.Linear, DType: devices.BF16, M: 8, N: 512, K: 2048, Batch: 1, Bias: true}},
		{"aten::baddbmm", `[[4,8,16],[4,8,32],[4,32,16]]`, []string{"float", "float", "float"}, nil,
			ops.Op{Kind: ops.Matmul, DType: devices.FP32, M: 8, N: 16, K: 32, Batch: 4, Bias: true}},
		{"aten::matmul", `[[2,3,8,64],[2,3,64,16]]`, []string{bf, bf}, nil,
			ops.Op{Kind: ops.Matmul, DType: devices.BF16, M: 8, N: 16, K: 64, Batch: 6}},
		{"aten::_scaled_dot_product_flash_attention", `[[2,16,128,64],[2,4,128,64],[2,4,128,64],[],[]]`, []string{bf, bf, bf, "Scalar", "Scalar"}, []string{"", "", "", "0.", "True"},
			ops.Op{Kind: ops.Attention, DType: devices.BF16, B: 2, Heads: 16, KVHeads: 4, SeqQ: 128, SeqK: 128, HeadDim: 64, Causal: true}},
		{"aten::layer_norm", `[[4,128,768],[],[768],[768],[]]`, []string{bf, "ScalarList", bf, bf, "Scalar"}, []string{"", "[768]", "", "", "1e-05"},
			ops.Op{Kind: ops.LayerNorm, DType: devices.BF16, Rows: 512, Cols: 768}},
		{"aten::_softmax", `[[4,12,128,128],[],[]]`, []string{"float", "Scalar", "Scalar"}, []string{"", "-1", "False"},
			ops.Op{Kind: ops.Softmax, DType: devices.FP32, Rows: 4 * 12 * 128, Cols: 128}},
		{"aten::gelu", `[[4,128,3072],[]]`, []string{bf, ""}, []string{"", "tanh"},
			ops.Op{Kind: ops.GELU, DType: devices.BF16, Elems: 4 * 128 * 3072, Tanh: true}},
		{"aten::gelu_backward", `[[4,128,3072],[4,128,3072],[]]`, []string{bf, bf, ""}, []string{"", "", "tanh"},
			ops.Op{Kind: ops.Add, DType: devices.BF16, Elems: 4 * 128 * 3072}},
		{"aten::embedding", `[[50257,768],[4,128],[],[],[]]`, []string{bf, "long int", "Scalar", "Scalar", "Scalar"}, nil,
			ops.Op{Kind: ops.Embedding, DType: devices.BF16, Rows: 512, Cols: 768}},
		{"aten::to", `[[1024],[],[],[],[]]`, []string{"float", "Scalar", "Scalar", "Scalar", ""}, []string{"", "15", "False", "False", ""},
			ops.Op{Kind: ops.Copy, DType: devices.FP32, Out: devices.BF16, Elems: 1024}},
		{"aten::conv2d", `[[8,64,56,56],[128,64,3,3],[],[],[],[],[]]`, []string{bf, bf, "", "ScalarList", "ScalarList", "ScalarList", "Scalar"}, []string{"", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"},
			ops.Op{Kind: ops.Conv2D, DType: devices.BF16, N: 8, C: 64, H: 56, W: 56, K: 128, R: 3, S: 3, Stride: 2, Pad: 1, Groups: 1}},
	}
	for _, c := range cases {
		var dims inputDims
		if err := json.Unmarshal([]byte(c.dims), &dims); err != nil {
			t.Fatal(err)
		}
		o := &Op{Name: c.name, OpArgs: &OpArgs{Inputs: dims, Types: c.types, Concrete: c.concrete}}
		got, err := model(call{op: o})
		if err != nil || len(got) != 1 || got[0] != c.want {
			t.Errorf("%s %s: %+v, %v; want %+v", c.name, c.dims, got, err, c.want)
		}
	}
}

// "Input Dims" as PyTorch writes it: per argument a tensor's dims, [] for
// a scalar or None, a list of dims for a tensor list.
func TestInputDims(t *testing.T) {
	var d inputDims
	if err := json.Unmarshal([]byte(` [[1, 2048], [], [[1,1],[1, 2048]], [[]] ] `), &d); err != nil {
		t.Fatal(err)
	}
	want := []Input{{Dims: []int64{1, 2048}}, {}, {List: [][]int64{{1, 1}, {1, 2048}}}, {List: [][]int64{{}}}}
	if fmt.Sprint(d) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", d, want)
	}
	for _, bad := range []string{`[1,2]`, `[["a"]]`, `[[[[1]]]]`, `[[1.5]]`, `{}`, `[[1,]]`} {
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// TestFindingsInUsersWords: findings on a trace name the ops as the trace
// does (the aten op, never gpucalc's model of it: ResNet-50's batch-norm
// backward is priced as an add, and was called "(add)"), quote the
// measured time (220 µs per call of the [64,256,56,56] batch-norm
// backward), and give each shape list once.
func TestFindingsInUsersWords(t *testing.T) {
	a := analyze(t, read(t, "testdata/trace_resnet50_train.json.gz"))
	var bn *review.Finding
	for i, f := range a.Findings {
		text := f.Op + " " + f.Message + " " + f.Fix
		for _, r := range a.Ops {
			if n := r.Name + " " + r.Shapes; r.Shapes != "" && strings.Count(text, n) > 1 {
				t.Errorf("finding %d gives %s more than once: %s", i+1, n, text)
			}
		}
		for _, k := range []string{"(add)", "(relu)", "(batchnorm)", "the add ", "the relu "} {
			if strings.Contains(f.Message+f.Fix, k) {
				t.Errorf("finding %d names gpucalc's model %q: %s %s", i+1, k, f.Message, f.Fix)
			}
		}
		if f.Check == "fusion" && strings.HasPrefix(f.Op, "aten::native_batch_norm_backward [64,256,56,56]") {
			bn = &a.Findings[i]
		}
	}
	if bn == nil {
		t.Fatal("no fusion finding on aten::native_batch_norm_backward [64,256,56,56]")
	}
	for _, want := range []string{"aten::native_batch_norm_backward stands alone after aten::threshold_backward [64,256,56,56] [64,256,56,56]", "of its measured 220 µs per run"} {
		if !strings.Contains(bn.Message, want) {
			t.Errorf("message %q; want %q", bn.Message, want)
		}
	}
	if want := "fuse aten::threshold_backward and aten::native_batch_norm_backward into one kernel"; !strings.HasPrefix(bn.Fix, want) {
		t.Errorf("fix %q; want %q", bn.Fix, want)
	}
}
