package ncu

import (
	"bytes"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/testfile"
)

// groundTruth reads the H100 export (testdata/ncu_raw.csv.gz, profiled on an H100 SXM):
// ncu --set full --page raw --csv over cuBLAS, cuDNN and PyTorch kernels,
// with the lines ncu and the program printed before the header.
func groundTruth(t testing.TB) []byte {
	t.Helper()
	return testfile.Gunzip(t, "testdata/ncu_raw.csv.gz")
}

func readKernels(t *testing.T, data []byte) []Kernel {
	t.Helper()
	ks, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func TestReadGroundTruth(t *testing.T) {
	ks := readKernels(t, groundTruth(t))
	if len(ks) != len(h100Kernels) {
		t.Fatalf("read %d kernels, want %d", len(ks), len(h100Kernels))
	}
	for i, k := range ks {
		w := h100Kernels[i]
		if k.ID != w.id || k.Name != w.name {
			t.Errorf("kernel %d: ID %d name %q, want %d %q", i, k.ID, k.Name, w.id, w.name)
		}
		if k.Device != "NVIDIA H100 80GB HBM3" || k.CC.String() != "9.0" {
			t.Errorf("ID %d: device %q cc %s", k.ID, k.Device, k.CC)
		}
		if k.Block != w.block || k.Grid != w.grid {
			t.Errorf("ID %d: block %v grid %v, want %v %v", k.ID, k.Block, k.Grid, w.block, w.grid)
		}
		if !near(k.Duration, w.durationNS*1e-9, 1e-12) {
			t.Errorf("ID %d: duration %g s, want %g ns", k.ID, k.Duration, w.durationNS)
		}
		if len(k.Missing) > 0 {
			t.Errorf("ID %d: missing %v from a --set full export", k.ID, k.Missing)
		}
		got := map[string]float64{}
		for _, wk := range k.Work {
			got[wk.Key()] = wk.FLOPs
		}
		for key, want := range map[string]float64{"fp32": w.fp32, "fp16": w.fp16, "bf16_tensor": w.bf16Tensor} {
			if !near(got[key], want, 1e-5) {
				t.Errorf("ID %d: %s FLOPs %g, want %g", k.ID, key, got[key], want)
			}
			delete(got, key)
		}
		if len(got) > 0 {
			t.Errorf("ID %d: unexpected work %v", k.ID, got)
		}
		if len(k.Traffic) != 3 || k.Traffic[0].Level != DRAM || k.Traffic[0].Bytes != w.dramBytes {
			t.Errorf("ID %d: traffic %v, want dram %g first of three levels", k.ID, k.Traffic, w.dramBytes)
		}
		if o := k.Occupancy; o.Theoretical == nil || *o.Theoretical != w.ncuTheoretical || o.Achieved == nil || *o.Achieved != w.achieved {
			t.Errorf("ID %d: ncu occupancy %v, want theoretical %g achieved %g", k.ID, k.Occupancy, w.ncuTheoretical, w.achieved)
		}
	}
}

// The matmuls' and attention's tensor FLOPs are the textbook counts: 2·M·N·K
// and 4·B·H·S²·D.
func TestTensorFLOPsMatchShapes(t *testing.T) {
	ks := readKernels(t, groundTruth(t))
	for _, c := range []struct {
		id    int
		flops float64
	}{
		{0, 2 * 4096 * 4096 * 4096},
		{1, 2 * 2048 * 2048 * 2048},
		{2, 2 * 64 * 4096 * 4096},
		{12, 4 * 8 * 16 * 4096 * 4096 * 128},
	} {
		if got := ks[c.id].Work[0].FLOPs; !near(got, c.flops, 5e-4) {
			t.Errorf("ID %d: %s FLOPs %g, want %g", c.id, ks[c.id].Work[0].Key(), got, c.flops)
		}
	}
}

func near(got, want, rel float64) bool {
	if want == 0 {
		return got == 0
	}
	d := (got - want) / want
	return d < rel && d > -rel
}

// h100Kernels holds what the export's counters say, computed from the raw
// columns with a separate script (Python csv): CUDA-core FLOPs = (add + mul +
// 2·fma) per-cycle rates × smsp__cycles_elapsed.avg (fp16: 2·hadd + 2·hmul +
// 4·hfma), tensor FLOPs = sm__ops_path_tensor_op_*.sum, DRAM bytes =
// dram__bytes_read.sum + dram__bytes_write.sum, and the occupancy columns as
// printed.
var h100Kernels = []struct {
	id                     int
	name                   string
	block, grid            Dim3
	durationNS             float64
	fp32, fp16, bf16Tensor float64
	dramBytes              float64
	dramIntensity          float64
	ncuTheoretical         float64
	achieved               float64
}{
	{0, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", Dim3{384, 1, 1}, Dim3{2, 66, 1}, 179456, 0, 0, 137438953472, 178553088, 769.737, 18.75, 14.64},
	{1, "Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>", Dim3{256, 1, 1}, Dim3{128, 1, 1}, 343040, 1.71841e+10, 0, 0, 36035328, 476.867, 12.50, 12.50},
	{2, "nvjet_sm90_tst_64x32_64x16_1x2_h_bz_NNT", Dim3{384, 1, 1}, Dim3{2, 64, 1}, 16064, 0, 0, 2147483648, 35448832, 60.5798, 18.75, 14.21},
	{3, "vectorized_layer_norm_kernel<float, float, 0>", Dim3{32, 4, 1}, Dim3{16384, 1, 1}, 262400, 1.2551e+09, 6.71081e+07, 0, 662113536, 1.99695, 75, 68.48},
	{4, "vectorized_layer_norm_kernel<BFloat16, float, 0>", Dim3{32, 4, 1}, Dim3{16384, 1, 1}, 114880, 1.25509e+09, 4.19433e+07, 0, 264484864, 4.90401, 100, 91.71},
	{5, "vectorized_layer_norm_kernel<BFloat16, float, 1>", Dim3{32, 4, 1}, Dim3{16384, 1, 1}, 117248, 2.81232e+08, 1.67812e+07, 0, 275888384, 1.0802, 100, 87.64},
	{6, "vectorized_elementwise_kernel<4, GeluCUDAKernelImpl::lambda(float), array<…>>", Dim3{128, 1, 1}, Dim3{65536, 1, 1}, 175552, 1.28554e+09, 6.7104e+07, 0, 516196608, 2.62041, 100, 83.85},
	{7, "vectorized_elementwise_kernel<4, GeluCUDAKernelImpl::lambda(float), array<…>>", Dim3{128, 1, 1}, Dim3{65536, 1, 1}, 175616, 1.48139e+09, 3.35537e+07, 0, 516164352, 2.93501, 100, 84.00},
	{8, "vectorized_elementwise_kernel<8, bfloat16_copy_kernel_cuda::lambda(float), array<…>>", Dim3{128, 1, 1}, Dim3{65536, 1, 1}, 126880, 0, 0, 0, 385927680, 0, 100, 85.65},
	{9, "vectorized_elementwise_kernel<8, GeluCUDAKernelImpl::lambda(BFloat16), array<…>>", Dim3{128, 1, 1}, Dim3{65536, 1, 1}, 87168, 1.48125e+09, 3.35512e+07, 0, 248555264, 6.09441, 100, 82.49},
	{10, "vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, array<char *, 3>>", Dim3{128, 1, 1}, Dim3{65536, 1, 1}, 259328, 1.34223e+08, 0, 0, 788328448, 0.170262, 100, 82.60},
	{11, "cunn_SoftMaxForwardReg<float, float, float, SoftMaxForwardEpilogue, long, 4>", Dim3{1024, 1, 1}, Dim3{16384, 1, 1}, 220896, 2.3011e+09, 3.35541e+08, 0, 519635968, 5.07402, 100, 94.49},
	{12, "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_cga1x1x1_kernel0_0", Dim3{384, 1, 1}, Dim3{132, 1, 1}, 1634528, 8.92971e+09, 0, 1099511627776, 529613824, 2092.92, 18.75, 14.06},
}

// build writes a raw-page CSV: header, units row (when units is not nil)
// and rows, every field quoted as ncu does.
func build(header, units []string, rows ...[]string) string {
	var b strings.Builder
	line := func(fs []string) {
		for i, f := range fs {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + strings.ReplaceAll(f, `"`, `""`) + `"`)
		}
		b.WriteByte('\n')
	}
	line(header)
	if units != nil {
		line(units)
	}
	for _, r := range rows {
		line(r)
	}
	return b.String()
}

var (
	smallHeader = []string{"ID", "Process ID", "Kernel Name", "Block Size", "Grid Size", "Device", "CC",
		"device__attribute_display_name", "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
		"smsp__cycles_elapsed.avg", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed",
		"sm__maximum_warps_per_active_cycle_pct"}
	smallUnits = []string{"", "", "", "", "", "", "", "", "usecond", "Mbyte", "byte", "cycle", "inst/cycle", "%"}
	smallRow   = []string{"0", "915", "void k<float>(float *, int)", "(256, 1, 1)", "(1024, 1, 1)", "0", "9.0",
		"NVIDIA H100 80GB HBM3", "1,234.5", "2.5", "1,000,000", "1,000", "3.5", "50"}
)

func TestReadSmall(t *testing.T) {
	ks := readKernels(t, []byte(build(smallHeader, smallUnits, smallRow)))
	k := ks[0]
	if k.Name != "k<float>" || k.FullName != "void k<float>(float *, int)" {
		t.Errorf("name %q full %q", k.Name, k.FullName)
	}
	if k.Grid != (Dim3{1024, 1, 1}) || k.Block != (Dim3{256, 1, 1}) {
		t.Errorf("grid %v block %v", k.Grid, k.Block)
	}
	if !near(k.Duration, 1234.5e-6, 1e-12) {
		t.Errorf("duration %g, want 1234.5 µs", k.Duration)
	}
	if k.Traffic[0].Bytes != 3.5e6 {
		t.Errorf("dram bytes %g, want 2.5 Mbyte + 1,000,000 byte", k.Traffic[0].Bytes)
	}
	if len(k.Work) != 1 || k.Work[0].FLOPs != 7000 {
		t.Errorf("work %v, want fp32 2·3.5·1000", k.Work)
	}
	for _, m := range []string{"launch__registers_per_thread", "l1tex__t_sectors.sum", "sm__ops_path_tensor_op_*.sum"} {
		if !slices.Contains(k.Missing, m) {
			t.Errorf("missing %v, want it to list %s", k.Missing, m)
		}
	}
}

// What a user's redirect captures around the CSV is tolerated.
func TestReadTolerates(t *testing.T) {
	csv := build(smallHeader, smallUnits, smallRow)
	for name, in := range map[string]string{
		"prof lines and program output": "==PROF== Connected to process 1\nloss 0.25, step 3\n\"quoted\",output\n==PROF== Disconnected\n" + csv,
		"CRLF":                          strings.ReplaceAll(csv, "\n", "\r\n"),
		"byte order mark":               "\xef\xbb\xbf" + csv,
		"trailing ncu lines":            csv + "==WARNING== Found outstanding GPU clock reset, trying to revert...\n==PROF== Report: a, b\n",
		"blank lines":                   "\n\n" + strings.Replace(csv, "\n", "\n\n", 1),
		"no units row":                  build(smallHeader, nil, smallRow),
		"no final newline":              strings.TrimSuffix(csv, "\n"),
	} {
		t.Run(name, func(t *testing.T) {
			ks, err := Read(strings.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			if len(ks) != 1 || ks[0].Name != "k<float>" {
				t.Fatalf("kernels %+v", ks)
			}
		})
	}
}

// Repeated launches keep their own IDs and rows, in file order.
func TestReadRepeatedKernels(t *testing.T) {
	r2 := append([]string(nil), smallRow...)
	r2[0] = "7"
	r3 := append([]string(nil), smallRow...)
	r3[0] = "7" // ncu IDs are unique, but a concatenated file may repeat one
	ks := readKernels(t, []byte(build(smallHeader, smallUnits, smallRow, r2, r3)))
	if len(ks) != 3 || ks[0].ID != 0 || ks[1].ID != 7 || ks[2].ID != 7 {
		t.Fatalf("kernels %v", ks)
	}
}

func TestReadRejects(t *testing.T) {
	details := build([]string{"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
		"Block Size", "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"},
		nil, []string{"0", "1", "p", "h", "k", "1", "7", "(1, 1, 1)", "(1, 1, 1)", "0", "9.0", "GPU Speed Of Light Throughput", "Duration", "usecond", "1.5"})
	bad := append([]string(nil), smallRow...)
	bad[9] = "12abc"
	noID := append([]string(nil), smallRow...)
	noID[0] = "x"
	for name, c := range map[string]struct{ in, want string }{
		"details page":  {details, "details page"},
		"binary":        {"NVIDIA\x00\x01\x02report", "binary input"},
		"invalid utf-8": {"\xff\xfe\xfd\xfc", "binary input"},
		"empty":         {"", "empty input"},
		"text report":   {"  k(float *) (1, 1, 1)x(256, 1, 1), Context 1\n    Section: GPU Speed Of Light Throughput\n", "text report"},
		"no header":     {"hello\nworld\n", "no Nsight Compute CSV header"},
		"header only":   {build(smallHeader, smallUnits), "no kernels"},
		"no metrics":    {build([]string{"ID", "Kernel Name"}, nil, []string{"0", "k"}), "no metric columns"},
		"no kernel":     {build([]string{"ID", "a__b"}, nil, []string{"0", "1"}), "Kernel Name"},
		"ragged":        {build(smallHeader, smallUnits, smallRow) + "\"1\",\"2\"\n", "2 fields, the header has"},
		"long line":     {build(smallHeader, smallUnits, smallRow) + strings.Repeat("1", 2<<20) + "\n", "line 4: longer than 1 MiB"},
		"zeros":         {strings.Repeat("\x00", 3<<20), "binary input"},
		"bom":           {"\ufeff" + build(smallHeader, smallUnits), "no kernels"},
		"bad number":    {build(smallHeader, smallUnits, bad), `dram__bytes_read.sum: value "12abc" is not a number`},
		"bad ID":        {build(smallHeader, smallUnits, noID), `ID "x"`},
		// A size beyond an int once read as -9223372036854775808.
		"huge smem": {build(append(slices.Clone(smallHeader), "launch__registers_per_thread", "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic"),
			append(slices.Clone(smallUnits), "register/thread", "byte", "byte"), append(slices.Clone(smallRow), "32", "0", "1e20")),
			`launch__shared_mem_per_block_dynamic is 1e+20; expected a whole number from 0 to 2147483647`},
		"bad quote": {build(smallHeader, smallUnits, smallRow) + "\"1,\"2\n", "line 4"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// Every rejection of the input's form says which export to make.
func TestRejectionsSayWhatToExport(t *testing.T) {
	for _, in := range []string{"", "x\x00y", "no csv here", build([]string{"ID", "Metric Name", "Metric Value", "Kernel Name"}, nil, []string{"0", "a", "1", "k"})} {
		_, err := Read(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), "ncu --csv --page raw") {
			t.Errorf("Read(%q) = %v, want a hint naming ncu --csv --page raw", in, err)
		}
	}
}

func TestParseNumber(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
		err  bool
	}{
		{"0", 0, true, false},
		{"1,234,567.89", 1234567.89, true, false},
		{" 42 ", 42, true, false},
		{"-3.5", -3.5, true, false},
		{"1e3", 1000, true, false},
		{"", 0, false, false},
		{"n/a", 0, false, false},
		{"nan", 0, false, false},
		{"NaN", 0, false, false},
		{"inf", 0, false, false},
		{"abc", 0, false, true},
		{"0x10", 0, false, true},
		{"1_000", 0, false, true},
		{"(1, 1, 1)", 0, false, true},
	} {
		v, ok, err := parseNumber(c.in)
		if v != c.want || ok != c.ok || (err != nil) != c.err {
			t.Errorf("parseNumber(%q) = %v, %v, %v; want %v, %v, error %v", c.in, v, ok, err, c.want, c.ok, c.err)
		}
	}
}

func TestUnitScale(t *testing.T) {
	for u, want := range map[string]float64{
		"": 1, "%": 1, "byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "KiB": 1024, "MiB": 1 << 20,
		"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1, "ns": 1e-9, "us": 1e-6, "ms": 1e-3,
		"byte/second": 1, "Gbyte/second": 1e9, "Tbyte/s": 1e12, "byte/usecond": 1e6, "cycle/nsecond": 1e9,
		"Kcycle": 1e3, "Minst": 1e6, "inst/cycle": 1, "register/thread": 1, "byte/block": 1, "hz": 1, "Ghz": 1e9,
		"sector": 1, "Msector": 1e6, "warp": 1, "%/register": 1,
	} {
		if got := unitScale(u); !near(got, want, 1e-15) {
			t.Errorf("unitScale(%q) = %g, want %g", u, got, want)
		}
	}
}

func TestShortName(t *testing.T) {
	for in, want := range map[string]string{
		"void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(T1::Params)":                                                           "Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>",
		"void at::<unnamed>::vectorized_layer_norm_kernel<c10::BFloat16, float, 1>(int, T2, const T1 *, const T1 *, const T1 *, T2 *, T2 *, T1 *)": "vectorized_layer_norm_kernel<BFloat16, float, 1>",
		"void at::vectorized_elementwise_kernel<4, at::CUDAFunctor_add<float>, std::array<char *, 3>>(int, T2, T3)":                                "vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, array<char *, 3>>",
		"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT":                                                                                           "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
		// Mangled names (--print-kernel-base mangled) are demangled first.
		"_Z6kernelPfi": "kernel",
		"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13AUnaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm2EEEEviT0_T1_": "vectorized_elementwise_kernel<4, AUnaryFunctor<…>, array<…> >",
		"_ZN12_GLOBAL__N_13fooIiEEvi": "foo<int>",
		// Lambdas keep the function they are defined in, demangler's form too.
		"void at::vectorized_elementwise_kernel<8, at::bfloat16_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda(float) (instance 1)], std::array<char *, 2>>(int, T2, T3)": "vectorized_elementwise_kernel<8, bfloat16_copy_kernel_cuda::lambda(float), array<…>>",
		"void f<g(int)::{lambda(float)#1}>(int)":    "f<g::lambda(float)>",
		"void (anonymous namespace)::foo<int>(int)": "foo<int>",
		"static __global__ void k(int)":             "k",
		"operator()":                                "operator()",
		"":                                          "",
		"(":                                         "(",
	} {
		if got := ShortName(in); got != want {
			t.Errorf("ShortName(%q)\n = %q\nwant %q", in, got, want)
		}
	}
	long := "k<" + strings.Repeat("a", 200) + ">"
	if got := ShortName(long); len([]rune(got)) != maxName || !strings.HasSuffix(got, "…") {
		t.Errorf("ShortName of a 203-character name = %q (%d runes), want %d ending in …", got, len([]rune(got)), maxName)
	}
}

// FuzzRead: no input makes the reader or the metrics panic.
func FuzzRead(f *testing.F) {
	f.Add(build(smallHeader, smallUnits, smallRow))
	f.Add("==PROF== x\n" + build(smallHeader, nil, smallRow, smallRow))
	f.Add(build([]string{"ID", "Kernel Name", "Block Size", "sm__ops_path_tensor_op_hmma_src_fp16_sparsity_off.sum"}, []string{"", "", "", "Kinst"}, []string{"1", "_ZN1a1bIiEEvv", "(1,", "1,2"}))
	f.Add("\"ID\",\"Kernel Name\",\"x__y\"\n\"\",\"\"\n")
	f.Add(string(groundTruth(f)[:20000]))
	f.Fuzz(func(t *testing.T, in string) {
		var ks []Kernel
		var err error
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ks, err = Read(strings.NewReader(in))
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20+1000*uint64(len(in)) {
			t.Fatalf("%d bytes of input allocated %d MiB", len(in), n>>20)
		}
		if err != nil {
			return
		}
		for _, k := range ks {
			_ = ShortName(k.FullName)
			_ = k.Block.String()
		}
	})
}

func BenchmarkReadGroundTruth(b *testing.B) {
	data := groundTruth(b)
	for b.Loop() {
		if _, err := Read(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLaunches: the H100 export read as Launches names its one device,
// finds it in the catalog, and analyses to what Read and Analyze give,
// kernel for kernel, whether visited in order (All, reusing one value), at
// random (Cursor) or each its own (Slice).
func TestLaunches(t *testing.T) {
	data := groundTruth(t)
	ks := readKernels(t, data)
	l, err := ReadLaunches(bytes.NewReader(data), MaxKernels)
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != len(ks) || !slices.Equal(l.DeviceNames(), []string{"NVIDIA H100 80GB HBM3"}) {
		t.Fatalf("%d launches on %q, want %d on the H100", l.Len(), l.DeviceNames(), len(ks))
	}
	c, err := devices.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	d, err := l.Device(c)
	if err != nil || d.Name != "H100 SXM" {
		t.Fatalf("device %q, %v", d.Name, err)
	}
	as := l.Analyze(d)
	all := as.Slice()
	at := as.Cursor()
	i := 0
	for a := range as.All() {
		want := Analyze(ks[i], d)
		if !reflect.DeepEqual(*a, want) || !reflect.DeepEqual(all[i], want) {
			t.Fatalf("kernel %d analysed differently", i)
		}
		if j := len(ks) - 1 - i; !reflect.DeepEqual(*at(j), Analyze(ks[j], d)) {
			t.Fatalf("kernel %d analysed differently at random", j)
		}
		i++
	}
	if i != len(ks) || as.Len() != len(ks) || len(all) != len(ks) {
		t.Errorf("%d analysed in order, %d in all, of %d", i, len(all), len(ks))
	}
}

// TestWholeNumber: the quick path reads what parseNumber's full one reads,
// and leaves everything else to it.
func TestWholeNumber(t *testing.T) {
	for _, s := range []string{"0", "7", "007", "1,024", "233,472", "1,234,567", "999,999,999,999,999", "123456789012345",
		"1234567890123456", "9999999999999999999", "1,5", "1,2345", "1234,567", ",1", "1,", "1,,234", " 12", "12 ", "-1", "1.5", "1e3", "", "n/a", "1,000.5"} {
		v, ok := wholeNumber(s)
		if !ok {
			continue
		}
		t2 := strings.ReplaceAll(s, ",", "")
		want, err := strconv.ParseFloat(t2, 64)
		if err != nil || v != want || !thousands(s) && strings.Contains(s, ",") {
			t.Errorf("wholeNumber(%q) = %v; the full reading gives %v, %v", s, v, want, err)
		}
	}
	for _, s := range []string{"1,5", "1,2345", "1234,567", ",1", "1,", "1,,234", "1234567890123456"} {
		if _, ok := wholeNumber(s); ok {
			t.Errorf("wholeNumber(%q) read it; it is the full path's to read or refuse", s)
		}
	}
}

// TestColumnOrder: column answers alike whether a row asks for metrics in
// the order the previous row did, in another, or more of them.
func TestColumnOrder(t *testing.T) {
	e := newExport([]string{"Kernel Name", "a__x.sum", "SM.Sec.b__y.sum", "b__y.sum", "c__z.sum"})
	want := map[string]int{"a__x.sum": 1, "b__y.sum": 3, "c__z.sum": 4, "d__w.sum": -1, "Kernel Name": 0}
	for _, order := range [][]string{
		{"a__x.sum", "b__y.sum", "c__z.sum"},
		{"a__x.sum", "b__y.sum", "c__z.sum"},
		{"c__z.sum", "d__w.sum", "a__x.sum", "b__y.sum", "Kernel Name"},
		{"a__x.sum", "d__w.sum"},
		{"a__x.sum", "b__y.sum", "c__z.sum", "d__w.sum", "Kernel Name", "a__x.sum"},
	} {
		e.next = 0
		for _, m := range order {
			if i, ok := e.column(m); i != want[m] || ok != (want[m] >= 0) {
				t.Errorf("order %v: column(%s) = %d, %v; want %d", order, m, i, ok, want[m])
			}
		}
	}
}
