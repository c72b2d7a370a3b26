package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/examples"
	"github.com/gpucalc/gpucalc/ncu"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/query"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/review"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/rows"
	"github.com/gpucalc/gpucalc/trace"
)

func (s *server) reportsPage(w http.ResponseWriter, r *http.Request) {
	q := formValues(r, map[string]string{"example": "", "device": ""})
	p := page{Title: "Reports", Nav: "reports", Q: q}
	chosen, _ := s.Catalog.Lookup(q["device"])
	for _, d := range s.Catalog.Devices() {
		p.Devices = append(p.Devices, option{d.Key(), d.Name, q["device"] != "" && d.Name == chosen.Name})
	}
	for _, n := range exampleNames() {
		p.Examples = append(p.Examples, option{n, n, n == q["example"]})
	}
	s.render(w, "reports.html", p)
}

// report turns an uploaded (POST, field "file") or example (GET,
// ?example=) workload into the page of `gpucalc check --format html`, an
// Nsight Compute export into the tables and chart of `gpucalc ncu`, and a
// torch.profiler trace into those of `gpucalc trace`.
func (s *server) report(r *http.Request) (answer, error) {
	var u upload
	if r.Method == http.MethodPost {
		var refused *answer
		if u, refused = readUpload(r); refused != nil {
			return *refused, nil
		}
	} else {
		q := formValues(r, nil)
		u.device = q["device"]
		name := path.Base(q["example"])
		var err error
		if u.data, err = fs.ReadFile(examples.FS, name); err != nil {
			return answer{Errors: fieldErrors{"example": fmt.Sprintf("no example %q; pick one of %s", q["example"], strings.Join(exampleNames(), ", "))}}, nil
		}
		u.name = "examples/" + name
	}
	var d devices.Device
	if u.device != "" {
		var err error
		if d, err = s.device(u.device); err != nil {
			return answer{Errors: fieldErrors{"device": err.Error()}}, nil
		}
	}
	in, err := open(r.Context(), u.data)
	if err != nil {
		return answer{Errors: fieldErrors{"file": fmt.Sprintf("%s: %v", u.name, err)}}, nil
	}
	switch kindOf(u.name, u.data) {
	case "ncu":
		return s.ncuReport(r.Context(), u.name, in, d)
	case "trace":
		return s.traceReport(r.Context(), u.name, in, d)
	}
	data, err := rows.ReadAll(in, MaxUpload)
	if err != nil {
		return answer{Errors: fieldErrors{"file": fmt.Sprintf("%s: %v", u.name, err)}}, nil
	}
	return s.checkReport(u.name, data, d)
}

// checkReport is `gpucalc check FILE --format html`.
func (s *server) checkReport(name string, data []byte, d devices.Device) (answer, error) {
	wl, err := ops.ParseWorkload(name, data)
	if err != nil {
		return answer{Errors: fieldErrors{"file": err.Error()}}, nil
	}
	if msg := tooMany(len(wl.Entries), "ops in the workload", "gpucalc check "+query.Quote(name)); msg != "" {
		return answer{Errors: fieldErrors{"file": msg}}, nil
	}
	rv := reports.Review{}
	if d.Name == "" {
		if d, err = s.device(devices.Default); err != nil {
			return answer{}, err
		}
		rv.Origin = "default; pick a device"
	}
	builtin, err := devices.Builtin()
	if err != nil {
		return answer{}, err
	}
	rep, err := review.Check(wl, d, builtin.Devices())
	if err != nil {
		return answer{Errors: fieldErrors{"file": err.Error()}}, nil
	}
	rv.Reports = []review.Report{rep}
	var buf bytes.Buffer
	if err := reports.ReviewHTML(&buf, rv); err != nil {
		return answer{}, err
	}
	cli := "gpucalc check " + query.Quote(name) + " --format html"
	if rv.Origin == "" {
		cli += " --device " + query.Quote(d.Key())
	}
	if s.Datasheet {
		cli += " --datasheet"
	}
	return answer{View: rv, HTML: buf.String(), CLI: cli}, nil
}

// ncuReport is `gpucalc ncu FILE`, with its chart.
func (s *server) ncuReport(ctx context.Context, name string, in io.Reader, d devices.Device) (answer, error) {
	cli := "gpucalc ncu " + query.Quote(name)
	// The reader stops past the limit as the rows stream, before they pile up.
	ks, err := ncu.ReadLaunches(in, maxRows)
	var many *ncu.TooManyError
	if errors.As(err, &many) {
		return answer{Errors: fieldErrors{"file": fmt.Sprintf("%s: line %d: the server reads exports of at most %d kernels; profile fewer launches, or run the command line%s", name, many.Line, maxRows, cliHint(cli))}}, nil
	}
	if err != nil {
		return answer{Errors: fieldErrors{"file": fmt.Sprintf("%s: %v", name, err)}}, nil
	}
	origin := "from --device"
	if d.Name == "" {
		c, err := ks.Device(s.Catalog)
		if err != nil {
			return answer{Errors: fieldErrors{"device": err.Error() + "; pick the device"}}, nil
		}
		if s.Datasheet {
			c = c.Datasheet()
		}
		d, origin = c, "from the export"
	} else {
		cli += " --device " + query.Quote(d.Key())
	}
	if s.Datasheet {
		cli += " --datasheet"
	}
	if err := ctx.Err(); err != nil {
		return answer{CLI: cli}, err
	}
	as := ks.Analyze(d)
	a := answer{View: reports.NCUView{Device: d.Name, DeviceOrigin: origin, Kernels: as}, Tables: tablesOf(reports.NCU(as, d.Name, origin)), CLI: cli}
	c, skipped := reports.NCUChart(as, d)
	fig, err := newFigure("ncu", c.Title, c, rooflineSize)
	if err != nil {
		return answer{}, err
	}
	a.Charts = []figure{fig}
	if len(skipped) > 0 && len(a.Tables) > 0 {
		a.Tables[0].Notes = append(a.Tables[0].Notes, skipped...)
	}
	return a, nil
}

// traceReport is `gpucalc trace FILE`, with its chart.
func (s *server) traceReport(ctx context.Context, name string, in io.Reader, d devices.Device) (answer, error) {
	tr, err := trace.Read(in)
	if err != nil {
		return answer{Errors: fieldErrors{"file": fmt.Sprintf("%s: %v", name, err)}}, nil
	}
	cli := "gpucalc trace " + query.Quote(name)
	origin := "from --device"
	if d.Name == "" {
		if tr.DeviceName() == "" {
			return answer{Errors: fieldErrors{"device": "the trace names no device (no deviceProperties): pick the device"}}, nil
		}
		if d, err = s.device(tr.DeviceName()); err != nil {
			return answer{Errors: fieldErrors{"device": fmt.Sprintf("the trace's device: %v; pick the device", err)}}, nil
		}
		origin = "from the trace"
	} else {
		cli += " --device " + query.Quote(d.Key())
	}
	if s.Datasheet {
		cli += " --datasheet"
	}
	m, err := roofline.New(d)
	if err != nil {
		return answer{}, err
	}
	arch, err := trace.Arch(tr, d)
	if err != nil {
		return answer{Errors: fieldErrors{"device": err.Error()}}, nil
	}
	if err := ctx.Err(); err != nil {
		return answer{CLI: cli}, err
	}
	an, err := trace.Analyze(tr, m, arch)
	if err != nil {
		return answer{Errors: fieldErrors{"file": fmt.Sprintf("%s: %v", name, err)}}, nil
	}
	if msg := tooMany(len(an.Ops), "distinct ops in the trace", cli); msg != "" {
		return answer{Errors: fieldErrors{"file": msg}}, nil
	}
	a := answer{View: reports.TraceView{DeviceOrigin: origin, Analysis: an}, Tables: tablesOf(reports.Trace(an, origin, 10)), CLI: cli}
	fig, err := newFigure("trace", "Ops of the trace on the roofline", reports.TraceChart(an, d), rooflineSize)
	if err != nil {
		return answer{}, err
	}
	a.Charts = []figure{fig}
	return a, nil
}
