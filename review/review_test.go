package review

import (
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/testfile"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/roofline"
)

func h100(t *testing.T) devices.Device {
	t.Helper()
	d, err := devices.Lookup("H100 SXM")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func builtin(t *testing.T) []devices.Device {
	t.Helper()
	c, err := devices.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return c.Devices()
}

func review(t *testing.T, d devices.Device, yaml string) Report {
	t.Helper()
	w, err := ops.ParseWorkload("w.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Check(w, d, builtin(t))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// find returns the findings of a check (about op, when op is not empty).
func find(r Report, check, op string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Check == check && (op == "" || f.Op == op) {
			out = append(out, f)
		}
	}
	return out
}

func readCSV(t *testing.T, name string) []map[string]string {
	t.Helper()
	recs, col := testfile.CSV(t, "testdata/"+name)
	var rows []map[string]string
	for _, r := range recs {
		m := map[string]string{}
		for h, i := range col {
			m[h] = r[i]
		}
		rows = append(rows, m)
	}
	return rows
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// benchSeconds returns the measured time of one roof_bench.csv row.
func benchSeconds(t *testing.T, op, dtype, shape string) float64 {
	t.Helper()
	for _, r := range readCSV(t, "roof_bench.csv") {
		if r["op"] == op && r["dtype"] == dtype && r["shape"] == shape {
			return num(t, r["ms"]) * 1e-3
		}
	}
	t.Fatalf("no roof_bench row %s %s %s", op, dtype, shape)
	return 0
}

// TestAlignment checks the GEMM alignment finding against the H100
// measurement it cites (roof_bench.csv: bf16 4095³ ran 4.65× slower than
// 4096³): the cited figures are the rows', the finding fires for 4095 and
// not 4096, and the model's slowdown for padding is the measured one within
// 15%.
func TestAlignment(t *testing.T) {
	aligned := benchSeconds(t, "matmul", "bf16", Unaligned.AlignedShape)
	slow := benchSeconds(t, "matmul", "bf16", Unaligned.Shape)
	if Unaligned.Aligned != aligned || Unaligned.Seconds != slow {
		t.Errorf("cited %g and %g s; roof_bench.csv has %g and %g", Unaligned.Aligned, Unaligned.Seconds, aligned, slow)
	}
	r := review(t, h100(t), "name: a\nops:\n  - {name: odd, op: matmul m=4095 n=4095 k=4095}\n  - {name: even, op: matmul m=4096 n=4096 k=4096}\n")
	if fs := find(r, "gemm_alignment", "even"); len(fs) != 0 {
		t.Errorf("4096³ flagged: %+v", fs)
	}
	fs := find(r, "gemm_alignment", "odd")
	if len(fs) != 1 {
		t.Fatalf("4095³: %d alignment findings, want 1", len(fs))
	}
	f := fs[0]
	if f.Severity != Error {
		t.Errorf("severity %s, want error (the fix saves most of the op)", f.Severity)
	}
	model := f.Numbers["expected_seconds"] / f.Numbers["padded_expected_seconds"]
	measured := slow / aligned
	if math.Abs(model/measured-1) > 0.15 {
		t.Errorf("model slowdown %.2f×, measured %.2f×", model, measured)
	}
	for _, want := range []string{"k=4095 (8190 bytes)", "n=4095", "matmul m=4096 n=4096 k=4096", "4.7×"} {
		if !strings.Contains(f.Message+f.Fix, want) {
			t.Errorf("finding does not say %q: %s / %s", want, f.Message, f.Fix)
		}
	}
}

// TestFusionSavesTheStandaloneOp checks the fused-epilogue saving against
// the H100: an activation fused into its producer's epilogue costs nothing
// of its own, so the saving is the standalone op's measured time
// (roof_bench.csv, fp32 gelu and relu of 1M to 256M elements), within 10%.
func TestFusionSavesTheStandaloneOp(t *testing.T) {
	d := h100(t)
	for _, r := range readCSV(t, "roof_bench.csv") {
		if r["op"] != "gelu" && r["op"] != "relu" || num(t, r["shape"]) < 1<<20 {
			continue
		}
		n := r["shape"]
		rep := review(t, d, "name: f\ndtype: fp32\nops:\n  - {name: mm, op: matmul m=1024 n="+strconv.Itoa(int(num(t, n))/1024)+" k=1024}\n  - {name: act, op: "+r["op"]+" n="+n+"}\n")
		fs := find(rep, "fusion", "act")
		if len(fs) != 1 {
			t.Fatalf("%s n=%s: %d fusion findings, want 1", r["op"], n, len(fs))
		}
		measured := num(t, r["ms"]) * 1e-3
		if got := fs[0].Saves; math.Abs(got/measured-1) > 0.10 {
			t.Errorf("%s n=%s: saves %.2f µs, measured standalone %.2f µs", r["op"], n, got*1e6, measured*1e6)
		}
		if got, want := fs[0].Numbers["saved_bytes"], 2*num(t, n)*4; got != want {
			t.Errorf("%s n=%s: saved bytes %g, want %g (written and read back once)", r["op"], n, got, want)
		}
	}
}

// TestFusionKeepsSharedOutputs checks that an output read by two ops is
// still written when one of them is fused, and that ops with no producer or
// compute-bound ops are not flagged.
func TestFusionKeepsSharedOutputs(t *testing.T) {
	r := review(t, h100(t), `name: f
ops:
  - {name: h, op: add n=16777216, inputs: []}
  - {name: norm, op: rmsnorm rows=4096 cols=4096}
  - {name: proj, op: linear tokens=4096 in=4096 out=4096}
  - {name: res, op: add n=16777216, inputs: [h, proj]}
`)
	if fs := find(r, "fusion", "h"); len(fs) != 0 {
		t.Errorf("op without producer flagged: %+v", fs)
	}
	if fs := find(r, "fusion", "proj"); len(fs) != 0 {
		t.Errorf("compute-bound op flagged: %+v", fs)
	}
	fs := find(r, "fusion", "norm")
	if len(fs) != 1 {
		t.Fatalf("norm: %d fusion findings, want 1", len(fs))
	}
	// h is read by norm and res: fusing the norm saves only its read.
	if got, want := fs[0].Numbers["saved_bytes"], 4096.0*4096*2; got != want {
		t.Errorf("saved %g bytes, want %g (the read alone)", got, want)
	}
	if !strings.Contains(fs[0].Fix, "fused add+norm") {
		t.Errorf("fix %q, want the fused add+norm kernel", fs[0].Fix)
	}
}

// TestLowOccupancyAgainstLatHide checks the Little's-law bandwidth of a
// memory-bound kernel against the H100's streaming reads at 4 to 64 warps
// per SM (lat_hide.csv): the occupancy is the rows' (block 128, residency
// capped with dynamic shared memory), the predicted bandwidth is within 25%
// of the measured one, and the finding fires where the kernel reached under
// 70% of the streaming bandwidth and not where it reached 90%.
func TestLowOccupancyAgainstLatHide(t *testing.T) {
	d := h100(t)
	model, err := roofline.New(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range readCSV(t, "lat_hide_read.csv") {
		warps, blocks := int(num(t, row["warps_per_sm"])), int(num(t, row["blocks_per_sm"]))
		r := review(t, d, `name: read
dtype: fp32
ops:
  - name: read
    op: copy n=536870912
    kernel: {threads: `+row["block"]+`, regs: 32, dynamic_smem: `+row["dyn_smem"]+`, global: {elem_bytes: 16, stride: 1}}
`)
		occ := find(r, "occupancy", "read")
		if len(occ) != 1 || occ[0].Numbers["blocks_per_sm"] != float64(blocks) {
			t.Fatalf("%d warps: occupancy %+v, want %d blocks per SM", warps, occ, blocks)
		}
		stream := model.Stream()
		measured := num(t, row["gbps"]) * 1e9
		got := Sustained(warps, d.SMs, 16, 1, stream)
		if math.Abs(got/measured-1) > 0.25 {
			t.Errorf("%d warps: sustained %.0f GB/s, measured %.0f", warps, got/1e9, measured/1e9)
		}
		low := find(r, "low_occupancy", "read")
		switch {
		case measured < 0.7*stream && len(low) != 1:
			t.Errorf("%d warps: measured %.0f GB/s of %.0f, but no low-occupancy finding", warps, measured/1e9, stream/1e9)
		case measured > 0.9*stream && len(low) != 0:
			t.Errorf("%d warps: measured %.0f GB/s of %.0f, but flagged: %s", warps, measured/1e9, stream/1e9, low[0].Message)
		}
	}
}

// TestWaveQuantization: 1152×2048 on 128×256 tiles is 9×8 = 72 tiles, one
// wave on the H100's 132 SMs: 1 − 72/132 = 45.5% of the slots idle.
func TestWaveQuantization(t *testing.T) {
	r := review(t, h100(t), "name: w\nops:\n  - {name: q, op: matmul m=1152 n=2048 k=8192}\n  - {name: full, op: matmul m=4096 n=4096 k=4096}\n")
	fs := find(r, "wave_quantization", "q")
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1", len(fs))
	}
	n := fs[0].Numbers
	if n["tiles"] != 72 || n["waves"] != 1 || n["last_wave_tiles"] != 72 || math.Abs(n["idle_share"]-(1-72.0/132)) > 1e-12 {
		t.Errorf("numbers %v", n)
	}
	// 4096² on 128×256 tiles: 512 tiles, 4 waves, 3% idle: not reported.
	if fs := find(r, "wave_quantization", "full"); len(fs) != 0 {
		t.Errorf("4096³ flagged: %s", fs[0].Message)
	}
}

// TestLaunchOverhead: the smallest ops of roof_bench.csv (65536 fp32
// elements) take 4.7-5.4 µs on the H100, nearly all launch: the check lists
// them, and the large op not.
func TestLaunchOverhead(t *testing.T) {
	r := review(t, h100(t), "name: l\ndtype: fp32\nops:\n  - {name: small, op: relu n=65536}\n  - {name: big, op: relu n=268435456}\n")
	fs := find(r, "launch_overhead", "")
	if len(fs) != 1 || fs[0].Numbers["ops"] != 1 || !strings.Contains(fs[0].Message, ": small.") {
		t.Fatalf("findings %+v", fs)
	}
	measured := benchSeconds(t, "relu", "fp32", "65536")
	if got := fs[0].Numbers["their_expected_seconds"]; math.Abs(got/measured-1) > 0.15 {
		t.Errorf("expected %.2f µs, measured %.2f µs", got*1e6, measured*1e6)
	}
}

// TestCapacityAndTransfers: 100 GiB does not fit the H100's 80 GiB (two
// devices); 4 × 1 GiB over PCIe 5.0 x16 at 64 GB/s take 4·2³⁰/64e9 s.
func TestCapacityAndTransfers(t *testing.T) {
	r := review(t, h100(t), `name: c
memory: 100GiB
transfers: [{name: batch, bytes: 1GiB, count: 4}]
ops:
  - {name: mm, op: matmul m=8192 n=8192 k=8192}
`)
	fs := find(r, "memory_capacity", "")
	if len(fs) != 1 || fs[0].Severity != Error || !strings.Contains(fs[0].Fix, "at least 2 devices") {
		t.Fatalf("capacity %+v", fs)
	}
	fs = find(r, "host_transfer", "batch")
	want := 4 * float64(1<<30) / 64e9
	if len(fs) != 1 || math.Abs(fs[0].Numbers["seconds"]/want-1) > 1e-12 || r.Transfer != fs[0].Numbers["seconds"] {
		t.Fatalf("transfer %+v, want %g s", fs, want)
	}
	if fs[0].Severity != Warning {
		t.Errorf("67 ms of transfers against a %s workload: severity %s, want warning", dur(r.Expected), fs[0].Severity)
	}
	r = review(t, h100(t), "name: c\nmemory: 40GiB\nops:\n  - {name: mm, op: matmul m=8192 n=8192 k=8192}\n")
	if fs := find(r, "memory_capacity", ""); len(fs) != 0 {
		t.Errorf("40 GiB on 80 GiB flagged: %+v", fs)
	}
}

// TestDevicePeaks: no catalog device breaks the identity; a user file that
// enters the H100's sparse BF16 rate as dense is caught, with or without a
// per-SM rate of its own.
func TestDevicePeaks(t *testing.T) {
	ref := builtin(t)
	w := ops.Workload{Name: "p", Entries: []ops.Entry{{Name: "mm", Op: ops.Op{Kind: ops.Add, Elems: 64, DType: devices.FP32}, Count: 1}}}
	for _, d := range ref {
		r, err := Check(w, d, ref)
		if err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		if fs := find(r, "device_peaks", ""); len(fs) != 0 {
			t.Errorf("%s: %s", d.Name, fs[0].Message)
		}
	}
	for _, perSM := range []string{"", ", per_sm_per_clock: 4096, clock: tensor"} {
		c, err := devices.Builtin()
		if err != nil {
			t.Fatal(err)
		}
		c, err = c.With("mine.yaml", []byte(`name: My H100
vendor: NVIDIA
architecture: Hopper
compute_capability: "9.0"
sources: {mine: "a datasheet read wrongly, https://example.com/datasheet"}
sms: {value: 132, source: mine}
boost_clock: {value: 1980MHz, source: mine}
tensor_clock: {value: 1830MHz, source: mine}
memory: {type: HBM3, size: {value: 80GiB, source: mine}, bandwidth: {value: 3.35TB/s, source: mine}}
dense:
  bf16_tensor: {value: 1979TFLOPS, source: mine`+perSM+`}
  fp32: {value: 66.9TFLOPS, source: mine}
`))
		if err != nil {
			t.Fatal(err)
		}
		d, err := c.Lookup("My H100")
		if err != nil {
			t.Fatal(err)
		}
		r, err := Check(w, d, ref)
		if err != nil {
			t.Fatal(err)
		}
		fs := find(r, "device_peaks", "dense.bf16_tensor")
		if len(fs) != 1 || fs[0].Severity != Error || !strings.Contains(fs[0].Message, "sparse") || math.Abs(fs[0].Numbers["ratio"]-2) > 0.03 {
			t.Errorf("per-SM %q: findings %+v", perSM, fs)
		}
		if fs := find(r, "device_peaks", "dense.fp32"); len(fs) != 0 {
			t.Errorf("fp32 flagged: %s", fs[0].Message)
		}
	}
}

// TestKernelChecks: 256 threads × 128 registers leave 2 blocks (16 warps,
// 25%) on cc 9.0's 64K registers; 32 spilled bytes → 136 registers, 1
// block; a 4-byte stride-2 access touches 8 sectors for 4 needed; a
// 4-byte stride-32 shared access is a 32-way conflict that a pad of one
// removes.
func TestKernelChecks(t *testing.T) {
	r := review(t, h100(t), `name: k
dtype: fp32
ops:
  - name: gather
    op: copy n=67108864
    kernel: {threads: 256, regs: 128, spill_bytes: 32, global: {elem_bytes: 4, stride: 2}, shared: {elem_bytes: 4, stride: 32}}
`)
	occ := find(r, "occupancy", "gather")
	if len(occ) != 1 || occ[0].Numbers["blocks_per_sm"] != 2 || occ[0].Numbers["occupancy"] != 0.25 || !strings.Contains(occ[0].Message, "limited by registers") {
		t.Fatalf("occupancy %+v", occ)
	}
	sp := find(r, "spills", "gather")
	if len(sp) != 1 || sp[0].Numbers["alternative_regs"] != 136 || sp[0].Numbers["alternative_occupancy"] != 0.125 {
		t.Errorf("spills %+v", sp)
	}
	co := find(r, "coalescing", "gather")
	if len(co) != 1 || co[0].Numbers["sectors_per_request"] != 8 || co[0].Numbers["ideal_sectors_per_request"] != 4 ||
		co[0].Numbers["effective_bytes_per_second"] != 3.35e12/2 || co[0].Severity != Warning {
		t.Errorf("coalescing %+v", co)
	}
	bc := find(r, "bank_conflicts", "gather")
	if len(bc) != 1 || bc[0].Numbers["way"] != 32 || bc[0].Numbers["padded_way"] != 1 || !strings.Contains(bc[0].Fix, "stride 33") {
		t.Errorf("bank conflicts %+v", bc)
	}
	low := find(r, "low_occupancy", "gather")
	if len(low) != 1 {
		t.Fatalf("16 warps × 128 B in flight per SM on a memory-bound op: %d low-occupancy findings, want 1", len(low))
	}
	// The kernel's penalty is in the op's expected time, and fixing both
	// the access and the occupancy removes it.
	o := r.Ops[0]
	if sum := co[0].Saves + low[0].Saves; math.Abs(o.KernelPenalty/sum-1) > 1e-9 || math.Abs(o.Expected-o.KernelPenalty-o.Point.Expected) > 1e-15 {
		t.Errorf("penalty %g, expected %g (library %g); the findings save %g", o.KernelPenalty, o.Expected, o.Point.Expected, sum)
	}
	for i := 1; i < len(r.Findings); i++ {
		if r.Findings[i-1].Severity.rank() > r.Findings[i].Severity.rank() {
			t.Errorf("findings not ordered by severity: %s before %s", r.Findings[i-1].Severity, r.Findings[i].Severity)
		}
	}
}

// TestKernelCannotLaunch: 1024 threads × 128 registers need 128K registers
// per block, twice what a block may have.
func TestKernelCannotLaunch(t *testing.T) {
	r := review(t, h100(t), "name: k\nops:\n  - {name: big, op: copy n=1024, kernel: {threads: 1024, regs: 128}}\n")
	fs := find(r, "occupancy", "big")
	if len(fs) != 1 || fs[0].Severity != Error || !strings.Contains(fs[0].Message, "cannot launch") {
		t.Errorf("findings %+v", fs)
	}
}

// TestExamples reviews the shipped workloads on the H100 and checks what a
// reader of their reports is told: the decode layer is launch- and
// memory-bound, the ResNet block's naive layout kernel touches 32 sectors
// per request (2-byte elements 512 bytes apart) where 2 would do.
func TestExamples(t *testing.T) {
	read := func(name string) string {
		data, err := os.ReadFile("../examples/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	d := h100(t)
	dec := review(t, d, read("llama3-8b-decode.yaml"))
	if len(find(dec, "launch_overhead", "")) != 1 || find(dec, "low_utilization", "")[0].Numbers["share"] != 1 {
		t.Errorf("decode: findings %+v", dec.Findings)
	}
	pre := review(t, d, read("llama3-8b-prefill.yaml"))
	if len(find(pre, "launch_overhead", "")) != 0 || len(find(pre, "fusion", "silu")) != 1 {
		t.Errorf("prefill: findings %+v", pre.Findings)
	}
	// Llama's SiLU gates gate_proj's output, so fusion puts it in
	// gate_proj's epilogue, never up_proj's (the examples had SiLU after
	// up_proj); the product reads the SiLU's output and up_proj's.
	for name, r := range map[string]Report{"decode": dec, "prefill": pre} {
		for _, f := range find(r, "fusion", "silu") {
			if !strings.Contains(f.Message, "after gate_proj") || !strings.Contains(f.Fix, "gate_proj's epilogue") || strings.Contains(f.Message+f.Fix, "up_proj") {
				t.Errorf("%s: silu fusion %q; fix %q", name, f.Message, f.Fix)
			}
		}
		if len(find(r, "fusion", "silu")) != 1 {
			t.Errorf("%s: no fusion finding for silu", name)
		}
	}
	cnn := review(t, d, read("resnet50-bottleneck.yaml"))
	co := find(cnn, "coalescing", "to_nhwc")
	if len(co) != 1 || co[0].Numbers["sectors_per_request"] != 32 || co[0].Numbers["ideal_sectors_per_request"] != 2 {
		t.Errorf("resnet: coalescing %+v", co)
	}
	if bc := find(cnn, "bank_conflicts", "to_nchw"); len(bc) != 1 || bc[0].Numbers["way"] != 32 {
		t.Errorf("resnet: bank conflicts %+v", bc)
	}
}

// FuzzCheck checks that no workload the parser accepts makes the review
// panic or produce times that are not finite.
func FuzzCheck(f *testing.F) {
	f.Add([]byte("name: x\nmemory: 1T\ntransfers: [{name: t, bytes: 1G}]\nops:\n  - {name: a, op: matmul m=4095 n=3 k=7}\n  - {name: b, op: gelu n=9, kernel: {threads: 33, regs: 255, spill_bytes: 9, global: {elem_bytes: 16, stride: 0, offset: 3}, shared: {elem_bytes: 8, stride: 3}}}\n"))
	f.Add([]byte("name: y\nops:\n  - {name: c, op: conv2d n=1 c=3 h=7 w=7 k=5 r=3 s=3}\n  - {name: s, op: softmax rows=3 cols=5}\n"))
	d, err := devices.Lookup("H100 SXM")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := ops.ParseWorkload("fuzz.yaml", data)
		if err != nil {
			return
		}
		r, err := Check(w, d, nil)
		if err != nil {
			return
		}
		if math.IsNaN(r.Expected) || math.IsInf(r.Expected, 0) || r.Expected <= 0 {
			t.Fatalf("expected time %g", r.Expected)
		}
		for _, f := range r.Findings {
			if math.IsNaN(f.Saves) || f.Saves < 0 {
				t.Fatalf("%s: saves %g", f.Check, f.Saves)
			}
		}
	})
}
