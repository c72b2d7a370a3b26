package roofline

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"testing"

	"github.com/gpucalc/gpucalc/internal/testfile"
	"github.com/gpucalc/gpucalc/ops"
)

// decodeRow is one row of a decode-attention benchmark
// (testdata/decode_attn_*.csv, made by decode_attn.py): one query token per
// sequence, bf16, each implementation timed as 10 calls replayed back to
// back in a CUDA graph.
type decodeRow struct {
	b, h, kv, d, ctx int64
	best, rows       float64 // seconds: the fastest implementation, the folded-rows SDPA
}

func readDecode(t *testing.T, file string) []decodeRow {
	t.Helper()
	recs, col := testfile.CSV(t, file)
	var out []decodeRow
	for _, r := range recs {
		n := func(k string) int64 {
			v, err := strconv.ParseInt(r[col[k]], 10, 64)
			if err != nil {
				t.Fatalf("%s: %s=%q: %v", file, k, r[col[k]], err)
			}
			return v
		}
		us := func(k string) float64 {
			v, err := strconv.ParseFloat(r[col[k]], 64)
			if err != nil {
				t.Fatalf("%s: %s=%q: %v", file, k, r[col[k]], err)
			}
			return v * 1e-6
		}
		out = append(out, decodeRow{b: n("b"), h: n("heads"), kv: n("kv_heads"), d: n("head_dim"), ctx: n("ctx"), best: us("best_us"), rows: us("sdpa_rows_us")})
	}
	return out
}

func (r decodeRow) spec(impl string) string {
	return fmt.Sprintf("attention b=%d h=%d kv=%d sq=1 sk=%d d=%d impl=%s", r.b, r.h, r.kv, r.ctx, r.d, impl)
}

// decodeErrors checks every row of file on device: the lower bound never
// above the fastest measured time, split-KV (the default) never expected
// slower than the unsplit schedules (rows, heads), and returns
// |expected − best| / best.
func decodeErrors(t *testing.T, dev, file string) []float64 {
	m := mustNew(t, device(t, dev))
	var errs []float64
	for _, r := range readDecode(t, file) {
		pt := func(impl string) Point {
			o, err := ops.Parse(r.spec(impl))
			if err != nil {
				t.Fatal(err)
			}
			p, err := m.Analyze(o)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		split, rows, heads := pt("split"), pt("rows"), pt("heads")
		if split.LowerBound > r.best {
			t.Errorf("%s: lower bound %.2f us above the measured %.2f us", r.spec("split"), split.LowerBound*1e6, r.best*1e6)
		}
		if split.Expected > rows.Expected || split.Expected > heads.Expected {
			t.Errorf("%s: split-KV expected %.2f us, slower than the folded rows' %.2f us or one CTA per head's %.2f us", r.spec("split"),
				split.Expected*1e6, rows.Expected*1e6, heads.Expected*1e6)
		}
		e := (split.Expected - r.best) / r.best
		errs = append(errs, math.Abs(e))
		t.Logf("b=%-3d h=%-2d kv=%-2d d=%-3d ctx=%-6d best %8.2f us expected %8.2f us (%+5.1f%%, %d kernels) | rows measured %8.2f expected %8.2f (%+5.1f%%)",
			r.b, r.h, r.kv, r.d, r.ctx, r.best*1e6, split.Expected*1e6, 100*e, split.Kernels, r.rows*1e6, rows.Expected*1e6, 100*(rows.Expected-r.rows)/r.rows)
	}
	return errs
}

// The goal for decode attention (split-KV, the default schedule):
// median |error| ≤ 10% and p90 ≤ 20% against the fastest of SDPA with
// enable_gqa, the folded-rows SDPA and a split-KV Triton kernel, on
// Llama-3.1-8B's head layout on an H100.
func TestDecodeAttentionH100(t *testing.T) {
	errs := decodeErrors(t, "h100", "testdata/decode_attn_h100.csv")
	sort.Float64s(errs)
	med, p90 := nearestRank(errs, 0.5), nearestRank(errs, 0.9)
	t.Logf("%d rows: median |error| %.1f%%, p90 %.1f%%", len(errs), 100*med, 100*p90)
	if med > 0.10 || p90 > 0.20 {
		t.Errorf("median |error| %.1f%% (max 10%%), p90 %.1f%% (max 20%%)", 100*med, 100*p90)
	}
}

// nearestRank is the p-quantile of sorted xs by nearest rank.
func nearestRank(sorted []float64, p float64) float64 {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// Held out: the same benchmark on every head layout (32/8, 64/8, 28/4,
// 32/32, 8/1 with head_dim 128; 16/8 with head_dim 64) on an H100 and an
// H200, measured after the model was built; nothing was tuned to them.
func TestDecodeAttentionHeldOut(t *testing.T) {
	for _, c := range []struct{ device, file string }{{"h100", "testdata/decode_attn_heldout_h100.csv"}, {"h200", "testdata/decode_attn_h200.csv"}} {
		t.Run(c.device, func(t *testing.T) {
			errs := decodeErrors(t, c.device, c.file)
			sort.Float64s(errs)
			med, p90 := nearestRank(errs, 0.5), nearestRank(errs, 0.9)
			t.Logf("%s: %d rows: median |error| %.1f%%, p90 %.1f%%", c.file, len(errs), 100*med, 100*p90)
			if med > 0.10 || p90 > 0.20 {
				t.Errorf("median |error| %.1f%% (max 10%%), p90 %.1f%% (max 20%%)", 100*med, 100*p90)
			}
		})
	}
}
