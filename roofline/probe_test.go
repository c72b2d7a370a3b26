package roofline

import (
	"math"
	"strconv"
	"testing"

	"github.com/gpucalc/gpucalc/internal/testfile"
)

// probeTimes reads a probe_attn_gemm.py file (testdata/probe_*.csv): the
// median time of 8192³ GEMMs by kind, in seconds.
func probeTimes(t *testing.T, file string) map[string]float64 {
	t.Helper()
	recs, col := testfile.CSV(t, file)
	out := map[string]float64{}
	for _, r := range recs {
		if r[col["us"]] == "" {
			continue // a decode-attention row
		}
		us, err := strconv.ParseFloat(r[col["us"]], 64)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out[r[col["kind"]]] = us * 1e-6
	}
	return out
}

// The goals for the tensor-core paths: int8 (B column-major,
// cuBLASLt) and fp8 (e4m3, torch._scaled_mm) 8192³ GEMMs expected within
// 10% of the probes on both GPUs; and one chip, one answer: a bf16 8192³
// GEMM is not expected slower on the H200 than on the H100, which share
// the GH100 die.
func TestTensorPathGEMMs(t *testing.T) {
	expect := map[string]map[string]float64{}
	for _, g := range []struct{ device, file string }{{"h100", "testdata/probe_h100.csv"}, {"h200", "testdata/probe_h200.csv"}} {
		probe := probeTimes(t, g.file)
		expect[g.device] = map[string]float64{}
		for _, c := range []struct{ kind, spec string }{
			{"gemm_int8_colmajor_b", "matmul m=8192 n=8192 k=8192 dtype=int8"},
			{"gemm_fp8_e4m3", "matmul m=8192 n=8192 k=8192 dtype=fp8"},
			{"gemm_bf16", "matmul m=8192 n=8192 k=8192 dtype=bf16"},
		} {
			p := analyze(t, device(t, g.device), c.spec)
			expect[g.device][c.kind] = p.Expected
			e := (p.Expected - probe[c.kind]) / probe[c.kind]
			t.Logf("%s %s: expected %.0f us, measured %.0f us (%+.1f%%)", g.device, c.kind, p.Expected*1e6, probe[c.kind]*1e6, 100*e)
			if c.kind != "gemm_bf16" && math.Abs(e) > 0.10 {
				t.Errorf("%s %s: expected %.0f us, %+.1f%% off the measured %.0f us (limit 10%%)", g.device, c.kind, p.Expected*1e6, 100*e, probe[c.kind]*1e6)
			}
			if p.LowerBound > probe[c.kind] {
				t.Errorf("%s %s: lower bound %.0f us above the measured %.0f us", g.device, c.kind, p.LowerBound*1e6, probe[c.kind]*1e6)
			}
		}
	}
	if a, b := expect["h100"]["gemm_bf16"], expect["h200"]["gemm_bf16"]; b > a {
		t.Errorf("bf16 8192³: H200 expected %.0f us, slower than the H100's %.0f us", b*1e6, a*1e6)
	}
}
