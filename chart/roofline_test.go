package chart_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/testfile"
	"github.com/gpucalc/gpucalc/ncu"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/roofline"
)

var update = flag.Bool("update", false, "rewrite the golden charts in testdata")

// exampleChart analyses an example workload on the named devices, as
// `gpucalc roofline --workload FILE --devices ... --plot` does.
func exampleChart(t testing.TB, file string, names ...string) chart.Roofline {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	w, err := ops.ParseWorkload(file, data)
	if err != nil {
		t.Fatal(err)
	}
	var devs []devices.Device
	var pts [][]roofline.Point
	for _, n := range names {
		d, err := devices.Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		m, err := roofline.New(d)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.AnalyzeWorkload(w)
		if err != nil {
			t.Fatal(err)
		}
		devs, pts = append(devs, d), append(pts, p)
	}
	return reports.RooflineChartOf("Roofline: "+strings.Join(names, " vs ")+"\n"+w.Name, devs, pts)
}

// ncuChart charts the H100 Nsight Compute export in ncu/testdata.
func ncuChart(t testing.TB) (chart.Roofline, []string) {
	t.Helper()
	ks, err := ncu.Read(bytes.NewReader(testfile.Gunzip(t, "../ncu/testdata/ncu_raw.csv.gz")))
	if err != nil {
		t.Fatal(err)
	}
	d, err := devices.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	return reports.NCUChart(ncu.AnalyzeAll(ks, d), d)
}

func TestLabelPlacement(t *testing.T) {
	examples, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(examples) == 0 {
		t.Fatal("no examples", err)
	}
	charts := map[string]chart.Roofline{}
	for _, f := range examples {
		charts[filepath.Base(f)+" h100"] = exampleChart(t, f, "h100")
		charts[filepath.Base(f)+" h100 a100 h200"] = exampleChart(t, f, "h100", "a100", "h200")
	}
	charts["ncu"], _ = ncuChart(t)
	for seed := int64(1); seed <= 5; seed++ {
		charts[fmt.Sprintf("dense 50 seed %d", seed)] = chart.DenseChart(50, seed)
	}
	for name, c := range charts {
		t.Run(name, func(t *testing.T) {
			n, skipped, sites, numbered := chart.CheckLabels(t, c)
			// Every point of the examples and the export is labelled or
			// numbered; a dense cluster's numbers may be left off where
			// there is no clean place (the key marks them), but not all.
			dense := strings.HasPrefix(name, "dense")
			if !dense && skipped > 0 || dense && n < 8 {
				t.Errorf("%d labels placed, %d keys left off", n, skipped)
			}
			t.Logf("%d sites, %d labels, numbered %v, %d keys left off", sites, n, numbered, skipped)
		})
	}
}
