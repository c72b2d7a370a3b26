package web

import (
	"net/http"
	"strconv"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/query"
	"github.com/gpucalc/gpucalc/reports"
)

// occupancyForm are the occupancy form's fields and their defaults: the
// occupancy question's (occupancy.NewQuery), on the default device. A
// field is named as the CLI's flag, so a command line's flags turn into a
// URL (?smem=48K is --smem 48K); ?arch= is a device field holding an
// architecture.
func (s *server) occupancyForm(r *http.Request) map[string]string {
	d := occupancy.NewQuery()
	q := formValues(r, map[string]string{
		"device": s.defaultKey(), "threads": strconv.Itoa(d.Threads), "regs": strconv.Itoa(d.Regs),
		"smem": occupancy.DefaultSmem, "static-smem": d.StaticSmem, "carveout": d.Carveout,
		"cluster": "0", "barriers": strconv.Itoa(d.Barriers), "max-threads": strconv.Itoa(d.MaxThreads),
	})
	if u := r.URL.Query(); u.Has("arch") && !u.Has("device") {
		q["device"] = u.Get("arch")
	}
	delete(q, "arch")
	return q
}

func (s *server) occupancyPage(w http.ResponseWriter, r *http.Request) {
	q := s.occupancyForm(r)
	p := page{Title: "Occupancy", Nav: "occupancy", Q: q}
	chosen, _ := s.Catalog.Lookup(q["device"])
	for _, d := range s.Catalog.Devices() {
		if _, err := d.Limits(); err != nil {
			continue // not an NVIDIA GPU: no occupancy model
		}
		p.Devices = append(p.Devices, option{d.Key(), d.Name + " (" + d.CC.SM() + ")", d.Name == chosen.Name})
	}
	for _, a := range devices.Archs() {
		sel := false
		if cc, err := devices.ParseCC(q["device"]); err == nil {
			sel = cc == a.CC
		}
		p.Archs = append(p.Archs, option{a.CC.SM(), a.CC.SM() + " (" + a.Family + ")", sel})
	}
	s.render(w, "occupancy.html", p)
}

// occupancyQuery maps the form onto the occupancy question; the device
// field names a device or, as a compute capability, an architecture.
func (s *server) occupancyQuery(f map[string]string) (occupancy.Query, query.Errors) {
	var errs query.Errors
	q := occupancy.Query{Smem: f["smem"], StaticSmem: f["static-smem"], Carveout: f["carveout"], Catalog: s.Catalog, Datasheet: s.Datasheet}
	q.Threads = formInt(f, "threads", &errs)
	q.Regs = formInt(f, "regs", &errs)
	q.Barriers = formInt(f, "barriers", &errs)
	q.MaxThreads = formInt(f, "max-threads", &errs)
	q.Cluster = formInt(f, "cluster", &errs)
	q.ClusterGiven = q.Cluster != 0
	q.Target(f["device"])
	return q, errs
}

// occupancyFields are the form's fields where the question's differ.
var occupancyFields = map[string]string{"arch": "device"}

// occupancy answers the occupancy form: the view of `gpucalc occupancy
// --format json`, its tables, and the three sweeps as charts.
func (s *server) occupancy(f map[string]string) (answer, error) {
	q, errs := s.occupancyQuery(f)
	if len(errs) > 0 {
		return answer{Errors: formErrors(errs, occupancyFields)}, nil
	}
	cli := q.Args().String()
	a, err := q.Answer()
	if fe := query.Fields(err); fe != nil {
		return answer{Errors: formErrors(fe, occupancyFields), CLI: cli}, nil
	}
	if err != nil {
		return answer{}, err
	}
	rep := reports.NewOccupancy(a.Target, a.Kernel, a.Launch, a.Defaults, a.Result, nil, &a.Cliffs, a.Clusters)
	out := answer{View: rep, Tables: tablesOf(rep.Tables()), CLI: cli}
	n, err := occupancy.SweepAround(a.Target.Arch, a.Kernel, a.Launch)
	if err != nil {
		return answer{}, err
	}
	c := reports.OccupancyChart(a.Target, a.Kernel, a.Launch, n)
	fig, err := newFigure("occupancy", c.Title, c, chart.Size{})
	if err != nil {
		return answer{}, err
	}
	out.Charts = []figure{fig}
	return out, nil
}
