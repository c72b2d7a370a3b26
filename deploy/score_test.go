package deploy

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/internal/testfile"
	"github.com/gpucalc/gpucalc/model"
)

// testConfigs loads a model_path of the shared deployments: a built-in, or
// the config.json aiconfigurator ships for it (testdata/configs). NVIDIA's
// fp4 checkpoints (nvidia/X-NVFP4) have X's architecture, and zhipuai's
// models are published as zai-org's.
func testConfigs(name string) (model.Config, error) {
	if c, err := model.LoadBuiltin(name); err == nil {
		return c, nil
	}
	file := strings.ReplaceAll(name, "/", "--")
	file = strings.Replace(file, "zhipuai--", "zai-org--", 1)
	if base, ok := strings.CutPrefix(strings.TrimSuffix(file, "-NVFP4"), "nvidia--"); ok {
		file = map[string]string{"DeepSeek-R1": "deepseek-ai--DeepSeek-R1", "DeepSeek-V3.1": "deepseek-ai--DeepSeek-V3", "Qwen3-32B": "Qwen--Qwen3-32B"}[base]
	}
	for _, f := range []string{file, strings.Replace(file, "--", "--Meta-", 1), strings.TrimSuffix(file, "-Instruct"), strings.Replace(strings.TrimSuffix(file, "-Instruct"), "--", "--Meta-", 1)} {
		data, err := os.ReadFile("testdata/configs/" + f + ".json")
		if err == nil {
			return model.Parse(name, data)
		}
	}
	return model.Config{}, fmt.Errorf("no config for %s", name)
}

type scored struct {
	family, mode     string
	ttftErr, tpotErr float64
	answered, notFit bool
}

// sharedBatch reads the shared deployments and indexes their columns.
func sharedBatch(t testing.TB) (Batch, map[string]int) {
	data := testfile.Gunzip(t, "testdata/serving.csv.gz")
	b, err := ReadBatch(bytes.NewReader(data))
	if err != nil && len(b.Rows) == 0 {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range b.Header {
		col[h] = i
	}
	return b, col
}

// scoreShared answers every shared deployment and returns each row's
// errors against its measured TTFT and TPOT.
func scoreShared(t testing.TB) []scored {
	b, col := sharedBatch(t)
	out := RunBatch(b.Rows, testConfigs)
	var s []scored
	for _, o := range out {
		c := o.Row.Cells
		x := scored{family: c[col["model_path"]] + " " + c[col["system"]] + " " + c[col["backend"]], mode: c[col["mode"]]}
		if o.Err == nil {
			x.answered = true
			if !o.Result.Memory.Fits {
				x.notFit = true
			} else {
				ttft, _ := strconv.ParseFloat(c[col["silicon_ttft_ms"]], 64)
				tpot, _ := strconv.ParseFloat(c[col["silicon_tpot_ms"]], 64)
				x.ttftErr = math.Abs(o.Result.TTFT.Mean*1e3-ttft) / ttft
				x.tpotErr = math.Abs(o.Result.TPOT.Mean*1e3-tpot) / tpot
			}
		}
		s = append(s, x)
	}
	return s
}

func quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[int(math.Ceil(p*float64(len(s))))-1]
}

// summary is the figures the issue scores: the share of rows answered, the
// share of measured deployments said not to fit, and the TPOT and TTFT
// errors' median and p90 over the answered rows that fit.
type summary struct {
	rows                               int
	answered, notFit                   float64
	tpotMed, tpotP90, ttftMed, ttftP90 float64
}

func summarize(s []scored) summary {
	var tt, tp []float64
	out := summary{rows: len(s)}
	for _, x := range s {
		if x.answered {
			out.answered++
		}
		if x.notFit {
			out.notFit++
		}
		if x.answered && !x.notFit {
			tt, tp = append(tt, x.ttftErr), append(tp, x.tpotErr)
		}
	}
	out.answered /= float64(len(s))
	out.notFit /= float64(len(s))
	out.tpotMed, out.tpotP90, out.ttftMed, out.ttftP90 = quantile(tp, .5), quantile(tp, .9), quantile(tt, .5), quantile(tt, .9)
	return out
}

// TestSharedDeployments scores every shared deployment (aiconfigurator's
// silicon sample on H100 SXM and B200 SXM) against its measured TTFT and
// TPOT. The goals: TPOT median ≤ 10% and p90 ≤ 25%, TTFT median ≤
// 20% and p90 ≤ 45%, 90% of rows answered, at most 1% said not to fit.
// Where a goal is not met today, the bound is today's figure, so that the
// figures cannot regress (docs/deploy.md states which).
func TestSharedDeployments(t *testing.T) {
	s := scoreShared(t)
	dense := func(x scored) bool {
		return strings.Contains(x.family, "Llama-3.1") || strings.HasPrefix(x.family, "Qwen/Qwen3-32B ")
	}
	var d []scored
	for _, x := range s {
		if dense(x) && x.mode == "agg" {
			d = append(d, x)
		}
	}
	for _, c := range []struct {
		name                               string
		s                                  []scored
		answered, notFit                   float64
		tpotMed, tpotP90, ttftMed, ttftP90 float64
	}{
		// Every row: the disaggregated rows without their pools' sizes
		// (13%) are refused; not fitting at the goal; the share answered,
		// TPOT and TTFT at today's figures (86.8%; 10.7% / 34.6%, 31.3% /
		// 90.5%) with half a point's slack.
		{"all rows", s, 0.863, 0.01, 0.112, 0.351, 0.318, 0.910},
		// The dense models aggregated (Llama-3.1-8B/70B, Qwen3-32B): the
		// share answered, not fitting and TPOT at the goals, TTFT at
		// today's figures (28.4% / 71.3%) with half a point's slack.
		{"dense, aggregated", d, 0.90, 0.01, 0.10, 0.25, 0.289, 0.718},
	} {
		g := summarize(c.s)
		t.Logf("%s: %d rows, %.1f%% answered, %.2f%% not fitting; TPOT median %.1f%% p90 %.1f%%; TTFT median %.1f%% p90 %.1f%%",
			c.name, g.rows, 100*g.answered, 100*g.notFit, 100*g.tpotMed, 100*g.tpotP90, 100*g.ttftMed, 100*g.ttftP90)
		if g.answered < c.answered || g.notFit > c.notFit || g.tpotMed > c.tpotMed || g.tpotP90 > c.tpotP90 || g.ttftMed > c.ttftMed || g.ttftP90 > c.ttftP90 {
			t.Errorf("%s: beyond the bounds (answered ≥ %.0f%%, not fitting ≤ %.0f%%, TPOT ≤ %.0f%%/%.0f%%, TTFT ≤ %.0f%%/%.0f%%)",
				c.name, 100*c.answered, 100*c.notFit, 100*c.tpotMed, 100*c.tpotP90, 100*c.ttftMed, 100*c.ttftP90)
		}
	}
}

// TestScoreByFamily logs the figures per model, GPU, engine and mode
// (go test -run ScoreByFamily -v); the bounds are TestSharedDeployments'.
func TestScoreByFamily(t *testing.T) {
	if testing.Short() || !testing.Verbose() {
		t.Skip("logs the per-family figures with -v")
	}
	s := scoreShared(t)
	groups := map[string][]scored{}
	for _, x := range s {
		groups[x.family+" "+x.mode] = append(groups[x.family+" "+x.mode], x)
	}
	logGroups(t, groups)
}

// TestScoreUnsizedDisagg logs (go test -run ScoreUnsizedDisagg -v, about two
// minutes, so only with -v) how the
// disaggregated rows refused for want of their pools' sizes come out if
// answered anyway, at the concurrency their ids give, with one prefill and
// one decode worker: the figures docs/deploy.md gives for refusing them.
func TestScoreUnsizedDisagg(t *testing.T) {
	if testing.Short() || !testing.Verbose() {
		t.Skip("logs the refused rows' figures with -v")
	}
	b, col := sharedBatch(t)
	var rs []BatchRow
	for _, r := range b.Rows {
		if d := r.Query.Disagg; r.Err != nil && d != nil && r.Query.Concurrency > 0 && (d.PrefillWorkers == 0 || d.DecodeWorkers == 0) {
			x := *d
			x.PrefillWorkers, x.DecodeWorkers = 1, 1
			r.Query.Disagg, r.Err = &x, nil
			rs = append(rs, r)
		}
	}
	groups := map[string][]scored{}
	for _, o := range RunBatch(rs, testConfigs) {
		c := o.Row.Cells
		x := scored{answered: o.Err == nil}
		if x.answered && o.Result.Memory.Fits {
			ttft, _ := strconv.ParseFloat(c[col["silicon_ttft_ms"]], 64)
			tpot, _ := strconv.ParseFloat(c[col["silicon_tpot_ms"]], 64)
			x.ttftErr = math.Abs(o.Result.TTFT.Mean*1e3-ttft) / ttft
			x.tpotErr = math.Abs(o.Result.TPOT.Mean*1e3-tpot) / tpot
		} else {
			x.notFit = x.answered
		}
		for _, k := range []string{"all", c[col["system"]] + " " + c[col["backend"]]} {
			groups[k] = append(groups[k], x)
		}
	}
	// Refusing these rows is right while answering them misses the goals
	// by far; should the one-of-each answer come within them, answer them.
	if g := summarize(groups["all"]); g.tpotMed <= 0.10 && g.ttftMed <= 0.20 {
		t.Errorf("the unsized disaggregated rows answered with one worker of each: TPOT %.1f%%, TTFT %.1f%% median, within the goals: answer them rather than refuse", 100*g.tpotMed, 100*g.ttftMed)
	}
	logGroups(t, groups)
}

// logGroups logs each group's figures, by name.
func logGroups(t *testing.T, groups map[string][]scored) {
	t.Helper()
	keys := slices.Sorted(maps.Keys(groups))
	for _, k := range keys {
		g := summarize(groups[k])
		t.Logf("%-56s rows %4d answered %5.1f%% not fitting %4.1f%%  TPOT %5.1f%% / %6.1f%%  TTFT %5.1f%% / %6.1f%%", k, g.rows, 100*g.answered, 100*g.notFit,
			100*g.tpotMed, 100*g.tpotP90, 100*g.ttftMed, 100*g.ttftP90)
	}
}
