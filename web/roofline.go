package web

import (
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/examples"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/query"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/roofline"
)

// rooflineForm are the roofline form's fields and their defaults: one
// GEMM on the default device. source says whether ops holds op specs (one
// a line, each an --op), example names an example workload, or workload
// holds pasted YAML.
func (s *server) rooflineForm(r *http.Request) map[string]string {
	return formValues(r, map[string]string{
		"source": "ops", "ops": "matmul m=4096 n=4096 k=4096 dtype=bf16", "example": "llama3-8b-decode.yaml", "workload": "", "devices": s.defaultKey(),
	})
}

// exampleNames lists the embedded example workloads.
func exampleNames() []string {
	names, _ := fs.Glob(examples.FS, "*.yaml")
	return names
}

func (s *server) rooflinePage(w http.ResponseWriter, r *http.Request) {
	q := s.rooflineForm(r)
	p := page{Title: "Roofline", Nav: "roofline", Q: q}
	p.Checks = s.deviceChecks(q["devices"])
	for _, n := range exampleNames() {
		p.Examples = append(p.Examples, option{n, n, n == q["example"]})
	}
	s.render(w, "roofline.html", p)
}

// rooflineQuery maps the form onto the roofline question; an example and
// pasted YAML are read as --workload reads a file.
func (s *server) rooflineQuery(f map[string]string) (roofline.Query, fieldErrors) {
	q := roofline.Query{Devices: devices.Named(formList(f["devices"])), Catalog: s.Catalog, Datasheet: s.Datasheet}
	errs := fieldErrors{}
	read := func(file, field string, data []byte) {
		w, err := ops.ParseWorkload(file, data)
		if err != nil {
			errs.add(field, err)
		}
		q.WorkloadFile, q.Workload = file, &w
	}
	switch f["source"] {
	case "example":
		name := path.Base(f["example"])
		data, err := fs.ReadFile(examples.FS, name)
		if err != nil {
			errs.add("example", fmt.Errorf("no example %q; pick one of %s", f["example"], strings.Join(exampleNames(), ", ")))
			break
		}
		read("examples/"+name, "example", data)
	case "workload":
		read("workload.yaml", "workload", []byte(f["workload"]))
	case "ops":
		for _, line := range strings.Split(f["ops"], "\n") {
			if line = strings.TrimSpace(line); line != "" {
				q.Ops = append(q.Ops, line)
			}
		}
	default:
		errs.add("source", fmt.Errorf("source %q: expected ops, example or workload", f["source"]))
	}
	return q, errs
}

// rooflineFields are the form's fields where the question's differ.
var rooflineFields = map[string]string{"op": "ops", "device": "devices"}

// roofline answers the roofline form: the view of `gpucalc roofline
// --format json`, its tables and the chart.
func (s *server) roofline(r *http.Request) (answer, error) {
	f := s.rooflineForm(r)
	q, errs := s.rooflineQuery(f)
	if len(errs) > 0 {
		return answer{Errors: errs}, nil
	}
	cli := q.Args().String()
	if f["source"] == "workload" {
		cli = "# save the YAML as workload.yaml, then:\n" + cli
	}
	if err := q.Validate(); err != nil {
		if fe := query.Fields(err); fe != nil {
			return answer{Errors: formErrors(fe, rooflineFields), CLI: cli}, nil
		}
		return answer{}, err
	}
	if msg := tooMany(rooflineRows(q), "rows (ops × devices)", cli); msg != "" {
		return answer{Errors: fieldErrors{f["source"]: msg}, CLI: cli}, nil
	}
	a, err := q.Answer()
	if err != nil {
		return answer{Errors: fieldErrors{"devices": err.Error()}, CLI: cli}, nil
	}
	wl, ms := a.Workload, a.Models
	notes := make([][]string, len(ms))
	for i, m := range ms {
		notes[i] = reports.RooflineModelNotes(m, false)
	}
	views := reports.NewRooflineViews(a.Priced, make([]string, len(ms)))
	out := answer{Tables: tablesOf(reports.RooflineTables(wl.Name, views, notes)), CLI: cli}
	if len(views) == 1 {
		out.View = views[0]
	} else {
		out.View = reports.RooflineComparison{Devices: views}
	}
	c := reports.RooflineViewsChart(wl.Name, devicesOf(a.Devices), views)
	fig, err := newFigure("roofline", c.Title, c, rooflineSize)
	if err != nil {
		return answer{}, err
	}
	out.Charts = []figure{fig}
	if u := c.Unplaced(); len(u) > 0 {
		out.Tables[0].Notes = append(out.Tables[0].Notes, "not on the chart: "+strings.Join(u, "; "))
	}
	return out, nil
}

// rooflineRows is how many rows a roofline answer has: ops × devices.
func rooflineRows(q roofline.Query) int {
	n := len(q.Ops)
	if q.Workload != nil {
		n = len(q.Workload.Entries)
	}
	d := len(q.Devices.Devices)
	if d == 0 {
		d = 1
	}
	return n * d
}
