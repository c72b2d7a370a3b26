package deploy

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/internal/testfile"
	"github.com/gpucalc/gpucalc/model"
)

// testConfigs loads a model_path of the shared deployments: a built-in, or
// the config.json aiconfigurator ships for it (testdata/configs).
func testConfigs(name string) (model.Config, error) {
	if c, err := model.LoadBuiltin(name); err == nil {
		return c, nil
	}
	file := strings.ReplaceAll(name, "/", "--")
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

// scoreShared answers every shared deployment and returns each row's
// errors against its measured TTFT and TPOT.
func scoreShared(t testing.TB) []scored {
	data := testfile.Gunzip(t, "testdata/serving.csv.gz")
	b, err := ReadBatch(bytes.NewReader(data))
	if err != nil && len(b.Rows) == 0 {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range b.Header {
		col[h] = i
	}
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

func TestScoreReport(t *testing.T) {
	s := scoreShared(t)
	groups := map[string][]scored{}
	for _, x := range s {
		groups[x.family+" "+x.mode] = append(groups[x.family+" "+x.mode], x)
		groups["ALL"] = append(groups["ALL"], x)
	}
	var keys []string
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var tt, tp []float64
		n, nf := 0, 0
		for _, x := range groups[k] {
			if x.answered {
				n++
			}
			if x.notFit {
				nf++
			}
			if x.answered && !x.notFit {
				tt, tp = append(tt, x.ttftErr), append(tp, x.tpotErr)
			}
		}
		t.Logf("%-60s rows %4d answered %4d notfit %3d  TPOT med %5.1f%% p90 %6.1f%%  TTFT med %5.1f%% p90 %6.1f%%", k, len(groups[k]), n, nf,
			100*quantile(tp, .5), 100*quantile(tp, .9), 100*quantile(tt, .5), 100*quantile(tt, .9))
	}
}

func TestScoreDump(t *testing.T) {
	if os.Getenv("DEPLOY_DUMP") == "" {
		t.Skip()
	}
	data := testfile.Gunzip(t, "testdata/serving.csv.gz")
	b, _ := ReadBatch(bytes.NewReader(data))
	col := map[string]int{}
	for i, h := range b.Header {
		col[h] = i
	}
	var keep []BatchRow
	for _, r := range b.Rows {
		if strings.Contains(r.Cells[col["model_path"]], os.Getenv("DEPLOY_DUMP")) || os.Getenv("DEPLOY_DUMP") == "all" {
			keep = append(keep, r)
		}
	}
	f, _ := os.Create("/tmp/dump.tsv")
	defer f.Close()
	for _, o := range RunBatch(keep, testConfigs) {
		c := o.Row.Cells
		r := o.Result
		fmt.Fprintf(f, "%s\t%s\t%s\t%s\t%s\tc%s\ttp%s\tdp%s\t%s\t%s\t%s\t%.1f\t%.2f\t%.0f\t%d\t%d\t%.1f\t%v\n", c[col["model_path"]], c[col["system"]], c[col["backend"]], c[col["gemm_quant_mode"]],
			c[col["isl"]]+"x"+c[col["osl"]], c[col["batch_size"]], c[col["tp_size"]], c[col["attention_dp_size"]], c[col["silicon_ttft_ms"]], c[col["silicon_tpot_ms"]], "",
			r.TTFT.Mean*1e3, r.TPOT.Mean*1e3, float64(r.Memory.KVSequences), r.Preemptions, r.Steps, r.MeanBatch, o.Err)
	}
}
