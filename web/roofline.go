package web

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/gpucalc/gpucalc/examples"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/roofline"
)

// rooflineDefaults: one GEMM on the CLI's default device.
var rooflineDefaults = map[string]string{
	"source": "ops", "ops": "matmul m=4096 n=4096 k=4096 dtype=bf16", "example": "llama3-8b-decode.yaml", "workload": "", "devices": "h100",
}

// exampleNames lists the embedded example workloads.
func exampleNames() []string {
	names, _ := fs.Glob(examples.FS, "*.yaml")
	return names
}

func (s *server) rooflinePage(w http.ResponseWriter, r *http.Request) {
	q := formValues(r, rooflineDefaults)
	p := page{Title: "Roofline", Nav: "roofline", Q: q}
	p.Checks = s.deviceChecks(q["devices"])
	for _, n := range exampleNames() {
		p.Examples = append(p.Examples, option{n, n, n == q["example"]})
	}
	s.render(w, "roofline.html", p)
}

// workload reads the roofline form's source: op specs (one a line), an
// example, or pasted YAML. The second result is the CLI's flags for it.
func workload(q map[string]string, errs fieldErrors) (ops.Workload, []string) {
	switch q["source"] {
	case "example":
		name := path.Base(q["example"])
		data, err := fs.ReadFile(examples.FS, name)
		if err != nil {
			errs.add("example", fmt.Errorf("no example %q; pick one of %s", q["example"], strings.Join(exampleNames(), ", ")))
			return ops.Workload{}, nil
		}
		w, err := ops.ParseWorkload(name, data)
		if err != nil {
			errs.add("example", err)
		}
		return w, []string{"--workload", "examples/" + name}
	case "workload":
		w, err := ops.ParseWorkload("the pasted workload", []byte(q["workload"]))
		if err != nil {
			errs.add("workload", err)
		}
		return w, []string{"--workload", "workload.yaml"}
	case "ops":
		w := ops.Workload{Name: "ops"}
		var flags []string
		for i, line := range strings.Split(q["ops"], "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			o, err := ops.Parse(line)
			if err != nil {
				errs.add("ops", fmt.Errorf("line %d: %w", i+1, err))
				continue
			}
			w.Entries = append(w.Entries, ops.Entry{Op: o, Count: 1})
			flags = append(flags, "--op", shellQuote(line))
		}
		if len(w.Entries) == 0 {
			errs.add("ops", errors.New("give one op a line, such as: matmul m=4096 n=4096 k=4096 dtype=bf16"))
		}
		return w, flags
	}
	errs.add("source", fmt.Errorf("source %q: expected ops, example or workload", q["source"]))
	return ops.Workload{}, nil
}

// roofline answers the roofline form: the view of `gpucalc roofline
// --format json`, its tables and the chart.
func (s *server) roofline(r *http.Request) (answer, error) {
	q := formValues(r, rooflineDefaults)
	errs := fieldErrors{}
	wl, flags := workload(q, errs)
	devs, keys := s.devicesOf(q["devices"], errs)
	args := append([]string{"gpucalc", "roofline"}, flags...)
	if len(keys) == 1 {
		args = append(args, "--device", shellQuote(keys[0]))
	} else if len(keys) > 1 {
		args = append(args, "--devices", shellQuote(strings.Join(keys, ",")))
	}
	if s.Datasheet {
		args = append(args, "--datasheet")
	}
	cli := strings.Join(args, " ")
	if q["source"] == "workload" {
		cli = "# save the YAML as workload.yaml, then:\n" + cli
	}
	if len(errs) == 0 {
		if msg := tooMany(len(wl.Entries)*len(devs), fmt.Sprintf("rows (%d ops × %d devices)", len(wl.Entries), len(devs)), cli); msg != "" {
			errs.add(q["source"], errors.New(msg))
		}
	}
	if len(errs) > 0 {
		return answer{Errors: errs, CLI: cli}, nil
	}
	var ms []*roofline.Model
	notes := make([][]string, len(devs))
	for i, d := range devs {
		if err := r.Context().Err(); err != nil {
			return answer{CLI: cli}, err
		}
		m, err := roofline.New(d)
		if err != nil {
			errs.add("devices", fmt.Errorf("%s: %w", d.Name, err))
			continue
		}
		ms, notes[i] = append(ms, m), reports.RooflineModelNotes(m, false)
	}
	var views []reports.RooflineView
	if len(errs) == 0 {
		ps, err := roofline.Compare(ms, wl)
		if err != nil {
			errs.add("devices", err)
		}
		views = reports.NewRooflineViews(ps, make([]string, len(ps)))
	}
	if len(errs) > 0 {
		return answer{Errors: errs, CLI: cli}, nil
	}
	a := answer{Tables: tablesOf(reports.RooflineTables(wl.Name, views, notes)), CLI: cli}
	if len(views) == 1 {
		a.View = views[0]
	} else {
		a.View = reports.RooflineComparison{Devices: views}
	}
	c := reports.RooflineViewsChart(wl.Name, devs, views)
	fig, err := newFigure("roofline", c.Title, c, rooflineSize)
	if err != nil {
		return answer{}, err
	}
	a.Charts = []figure{fig}
	if u := c.Unplaced(); len(u) > 0 {
		a.Tables[0].Notes = append(a.Tables[0].Notes, "not on the chart: "+strings.Join(u, "; "))
	}
	return a, nil
}
