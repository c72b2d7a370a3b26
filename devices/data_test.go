package devices

import (
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
)

func builtinDevices(t *testing.T) []Device {
	t.Helper()
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return c.Devices()
}

// TestCatalogHasTheIssueList checks that the catalog holds every GPU issues
// 2, 24 and 37 ask for.
func TestCatalogHasTheIssueList(t *testing.T) {
	want := []string{"V100 SXM2 16GB", "V100 SXM2 32GB", "A100 SXM4 40GB", "A100 SXM4 80GB", "A100 PCIe 80GB",
		"H100 SXM", "H100 PCIe", "H100 NVL", "H200 SXM", "B200", "L4", "L40S", "A10", "T4", "RTX 4090", "RTX 5090", "MI300X",
		"A40", "RTX A6000", "RTX 3090", "L40", "GH200", "H20", "B300", "GB200", "GB300", "RTX PRO 6000 Blackwell Server Edition"}
	have := map[string]bool{}
	for _, d := range builtinDevices(t) {
		have[d.Name] = true
	}
	for _, n := range want {
		if !have[n] {
			t.Errorf("catalog lacks %q", n)
		}
	}
	if len(have) != len(want) {
		t.Errorf("catalog has %d devices, want %d", len(have), len(want))
	}
}

// TestPeaksFollowFromPerSMRate checks every dense peak that states how it
// arises against SMs x clock x FLOP/clock/SM, within 3%, and that every
// tensor peak states it.
func TestPeaksFollowFromPerSMRate(t *testing.T) {
	for _, d := range builtinDevices(t) {
		for k, p := range d.Dense {
			if p.PerSMPerClock == 0 {
				if strings.HasSuffix(k, "_tensor") {
					t.Errorf("%s: dense.%s has no per_sm_per_clock", d.Name, k)
				}
				continue
			}
			clock := d.BoostClockHz
			if p.Clock == "tensor" {
				clock = d.TensorClockHz
			}
			derived := float64(d.SMs) * clock * p.PerSMPerClock
			if r := derived / p.PerSecond; math.Abs(r-1) > 0.03 {
				t.Errorf("%s: dense.%s = %.4g, but %d SMs x %.0f MHz (%s) x %g = %.4g (%.1f%% off)",
					d.Name, k, p.PerSecond, d.SMs, clock/1e6, p.Clock, p.PerSMPerClock, derived, 100*(r-1))
			}
		}
	}
}

// TestTensorRatePerSM checks the dense 16-bit tensor FLOP/clock/SM of each
// family against the architecture whitepapers and TensorRT-LLM's
// cluster_info.py (V100/T4/A10/L4/L40S 1024, A100 2048, H100/H200 4096, GeForce Ada with FP32
// accumulation 512; MI300X 2048 per CU from 1307.4 TFLOPS / 304 CUs / 2.1 GHz).
func TestTensorRatePerSM(t *testing.T) {
	for _, tc := range []struct {
		device string
		key    string
		want   float64
	}{
		{"V100 SXM2 16GB", "fp16_tensor", 1024},
		{"T4", "fp16_tensor", 1024},
		{"A10", "bf16_tensor", 1024},
		{"L4", "bf16_tensor", 1024},
		{"L40S", "bf16_tensor", 1024},
		{"A100 SXM4 80GB", "bf16_tensor", 2048},
		{"H100 SXM", "bf16_tensor", 4096},
		{"H100 PCIe", "bf16_tensor", 4096},
		{"H200 SXM", "bf16_tensor", 4096},
		{"RTX 4090", "bf16_tensor", 512},
		{"MI300X", "bf16_tensor", 2048},
		// Professional GA102 parts accumulate in FP32 at full rate,
		// GeForce GA102 and the L40 at half.
		{"A40", "bf16_tensor", 1024},
		{"RTX A6000", "bf16_tensor", 1024},
		{"RTX 3090", "bf16_tensor", 512},
		{"L40", "bf16_tensor", 512},
		{"GH200", "bf16_tensor", 4096},
		// The H20's tensor rate is cut to a quarter of GH100's per SM;
		// Blackwell's is twice Hopper's.
		{"H20", "bf16_tensor", 1024},
		{"B300", "bf16_tensor", 8192},
		{"GB200", "bf16_tensor", 8192},
	} {
		d, err := Lookup(tc.device)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Dense[tc.key].PerSMPerClock; got != tc.want {
			t.Errorf("%s dense.%s: %g FLOP/clock/SM, want %g", tc.device, tc.key, got, tc.want)
		}
	}
}

// TestSparseIsTwiceDense checks every 2:4-sparse rate against its dense rate,
// and that the parts without structured sparsity (Volta, Turing) have none.
func TestSparseIsTwiceDense(t *testing.T) {
	for _, d := range builtinDevices(t) {
		if d.Architecture == "Volta" || d.Architecture == "Turing" {
			if len(d.Sparse) > 0 {
				t.Errorf("%s: %s has no 2:4 sparsity, but the entry gives sparse rates", d.Name, d.Architecture)
			}
			continue
		}
		if len(d.Sparse) == 0 {
			t.Errorf("%s: no sparse rates", d.Name)
		}
		for k, sp := range d.Sparse {
			if r := sp.PerSecond / d.Dense[k].PerSecond; math.Abs(r/2-1) > 0.03 {
				t.Errorf("%s: sparse.%s / dense.%s = %.3f, want 2", d.Name, k, k, r)
			}
		}
	}
}

// TestEveryNumberHasASource checks that each number of each entry names a
// source that points somewhere: a URL, our research notes or ground truth,
// or a stated derivation.
func TestEveryNumberHasASource(t *testing.T) {
	for _, d := range builtinDevices(t) {
		fields := []string{"sms", "boost_clock", "memory.size", "memory.bandwidth", "tdp", "host_link.bandwidth", "l2.size"}
		if d.TensorClockHz != d.BoostClockHz {
			fields = append(fields, "tensor_clock")
		}
		if d.L2.BytesPerSecond > 0 {
			fields = append(fields, "l2.bandwidth")
		}
		if d.PeerLink.BytesPerSecond > 0 {
			fields = append(fields, "peer_link.bandwidth")
		}
		for k := range d.Dense {
			fields = append(fields, "dense."+k)
		}
		for k := range d.Sparse {
			fields = append(fields, "sparse."+k)
		}
		for _, f := range fields {
			src := d.Source(f)
			if src == "" {
				t.Errorf("%s: %s has no source", d.Name, f)
				continue
			}
			if !strings.Contains(src, "http") && !strings.Contains(src, "in this repository") && !strings.HasPrefix(src, "derived here:") {
				t.Errorf("%s: source of %s names no URL, file of this repository or derivation: %q", d.Name, f, src)
			}
		}
		if d.L2.BytesPerSecond > 0 && !strings.HasPrefix(d.Source("l2.bandwidth"), "measured:") {
			t.Errorf("%s: L2 bandwidth is a measurement; its source must say so", d.Name)
		}
	}
}

// TestH100MatchesGroundTruth compares the H100 entry and the cc 9.0 limits
// with cudaGetDeviceProperties on a real H100 SXM (testdata/h100-device.json,
// as measured on that H100).
func TestH100MatchesGroundTruth(t *testing.T) {
	data, err := os.ReadFile("testdata/h100-device.json")
	if err != nil {
		t.Fatal(err)
	}
	var gt struct {
		Name                        string `json:"name"`
		Major, Minor                int
		MultiProcessorCount         int   `json:"multiProcessorCount"`
		ClockRateKHz                int   `json:"clockRateKHz"`
		L2CacheSize                 int64 `json:"l2CacheSize"`
		SharedMemPerBlock           int   `json:"sharedMemPerBlock"`
		SharedMemPerMultiprocessor  int   `json:"sharedMemPerMultiprocessor"`
		SharedMemPerBlockOptin      int   `json:"sharedMemPerBlockOptin"`
		ReservedSharedMemPerBlock   int   `json:"reservedSharedMemPerBlock"`
		RegsPerBlock                int   `json:"regsPerBlock"`
		RegsPerMultiprocessor       int   `json:"regsPerMultiprocessor"`
		WarpSize                    int   `json:"warpSize"`
		MaxThreadsPerBlock          int   `json:"maxThreadsPerBlock"`
		MaxThreadsPerMultiProcessor int   `json:"maxThreadsPerMultiProcessor"`
		MaxBlocksPerMultiProcessor  int   `json:"maxBlocksPerMultiProcessor"`
	}
	if err := json.Unmarshal(data, &gt); err != nil {
		t.Fatal(err)
	}
	d, err := Lookup(gt.Name)
	if err != nil {
		t.Fatalf("lookup by the name cudaGetDeviceProperties prints: %v", err)
	}
	a, err := d.Limits()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what      string
		got, want int64
	}{
		{"SMs", int64(d.SMs), int64(gt.MultiProcessorCount)},
		{"boost clock kHz", int64(d.BoostClockHz / 1e3), int64(gt.ClockRateKHz)},
		{"L2 bytes", d.L2.Bytes, gt.L2CacheSize},
		{"cc major", int64(d.CC.Major), int64(gt.Major)},
		{"cc minor", int64(d.CC.Minor), int64(gt.Minor)},
		{"smem per SM", int64(a.SmemPerSM), int64(gt.SharedMemPerMultiprocessor)},
		{"smem per block opt-in", int64(a.SmemPerBlockOptin), int64(gt.SharedMemPerBlockOptin)},
		{"smem reserved per block", int64(a.SmemReservedPerBlock), int64(gt.ReservedSharedMemPerBlock)},
		{"smem per block", int64(a.SmemPerBlock), int64(gt.SharedMemPerBlock)},
		{"regs per SM", int64(a.RegsPerSM), int64(gt.RegsPerMultiprocessor)},
		{"regs per block", int64(a.RegsPerBlock), int64(gt.RegsPerBlock)},
		{"threads per SM", int64(a.MaxThreadsPerSM), int64(gt.MaxThreadsPerMultiProcessor)},
		{"threads per block", int64(a.MaxThreadsPerBlock), int64(gt.MaxThreadsPerBlock)},
		{"blocks per SM", int64(a.MaxBlocksPerSM), int64(gt.MaxBlocksPerMultiProcessor)},
		{"warp size", int64(a.WarpSize), int64(gt.WarpSize)},
		{"warps per SM", int64(a.MaxWarpsPerSM), int64(gt.MaxThreadsPerMultiProcessor / gt.WarpSize)},
	} {
		if c.got != c.want {
			t.Errorf("%s: catalog %d, H100 %d", c.what, c.got, c.want)
		}
	}
}

// TestRidgePoints compares dense 16-bit tensor peak / DRAM bandwidth with
// ridge points worked out by hand from the datasheets' dense peaks and
// bandwidths (e.g. H100 SXM 989.4 TFLOP/s / 3.35 TB/s = 295 FLOP/B).
func TestRidgePoints(t *testing.T) {
	for _, tc := range []struct {
		device string
		dtype  DType
		want   float64
	}{
		{"V100 SXM2 16GB", FP16, 139},
		{"A100 SXM4 40GB", BF16, 201},
		{"A100 SXM4 80GB", BF16, 153},
		{"H100 SXM", BF16, 295},
		{"H100 PCIe", BF16, 378},
		{"H200 SXM", BF16, 206},
		{"B200", BF16, 292},
		{"L4", BF16, 403},
		{"L40S", BF16, 419},
		{"A10", BF16, 208},
		{"T4", FP16, 203},
		{"RTX 4090", BF16, 164},
		{"MI300X", BF16, 247},
		{"A40", BF16, 215},       // 149.7 TFLOP/s / 696 GB/s
		{"RTX A6000", BF16, 202}, // 154.8 / 768
		{"RTX 3090", BF16, 76},   // 71 / 936
		{"L40", BF16, 210},       // 181.05 / 864
		{"GH200", BF16, 247},     // 989.4 / 4000
		{"H20", BF16, 37},        // 148 / 4000: a quarter of H100's tensor rate per SM on 78 SMs
		{"B300", BF16, 292},      // 2250 / 7700
		{"GB200", BF16, 313},     // 2500 / 8000
	} {
		d, err := Lookup(tc.device)
		if err != nil {
			t.Fatal(err)
		}
		r, err := d.Ridge(tc.dtype, Tensor)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r-tc.want) > 0.5+0.005*tc.want {
			t.Errorf("%s ridge (%s tensor / DRAM) = %.1f FLOP/B, want %g", tc.device, tc.dtype, r, tc.want)
		}
	}
}

// TestSourcesStayInRepository: a source may cite a file of this repository
// (which must exist) or a public source, never a path outside the
// repository, which a clone does not have.
func TestSourcesStayInRepository(t *testing.T) {
	repoPath := regexp.MustCompile(`\b(?:[a-z]+/)+testdata/[\w.-]+`)
	outside := regexp.MustCompile(`(?:^|[\s("'])(?:shared|/work|/home|~)/`)
	err := fs.WalkDir(dataFS, "data", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := dataFS.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if outside.MatchString(line) {
				t.Errorf("%s:%d cites a path outside the repository: %s", p, i+1, line)
			}
			for _, f := range repoPath.FindAllString(line, -1) {
				if _, err := os.Stat("../" + f); err != nil {
					t.Errorf("%s:%d cites %s, which the repository lacks", p, i+1, f)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
