package web

import (
	"bytes"
	"compress/gzip"
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
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/review"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/trace"
)

func (s *server) reportsPage(w http.ResponseWriter, r *http.Request) {
	q := query(r, map[string]string{"example": "", "device": ""})
	p := page{Title: "Reports", Nav: "reports", Q: q}
	chosen, _ := s.Catalog.Lookup(q["device"])
	for _, d := range s.Catalog.Devices() {
		p.Devices = append(p.Devices, option{deviceKey(d), d.Name, q["device"] != "" && d.Name == chosen.Name})
	}
	for _, n := range exampleNames() {
		p.Examples = append(p.Examples, option{n, n, n == q["example"]})
	}
	s.render(w, "reports.html", p)
}

// apiReport turns an uploaded (POST, field "file") or example (GET,
// ?example=) workload into the page of `gpucalc check --format html`, an
// Nsight Compute export into the tables and chart of `gpucalc ncu`, and a
// torch.profiler trace into those of `gpucalc trace`.
func (s *server) apiReport(w http.ResponseWriter, r *http.Request) {
	errs := fieldErrors{}
	var name, device string
	var data []byte
	if r.Method == http.MethodPost {
		name, data = upload(r, errs)
		device = r.FormValue("device")
	} else {
		q := query(r, nil)
		device = q["device"]
		name = path.Base(q["example"])
		var err error
		if data, err = fs.ReadFile(examples.FS, name); err != nil {
			errs.add("example", fmt.Errorf("no example %q; pick one of %s", q["example"], strings.Join(exampleNames(), ", ")))
		}
		name = "examples/" + name
	}
	if len(errs) > 0 {
		reply(w, answer{Errors: errs})
		return
	}
	var d devices.Device
	if device != "" {
		var err error
		if d, err = s.device(device); err != nil {
			reply(w, answer{Errors: fieldErrors{"device": err.Error()}})
			return
		}
	}
	var a answer
	var err error
	switch kindOf(name, data) {
	case "ncu":
		a, err = s.ncuReport(name, data, d)
	case "trace":
		a, err = s.traceReport(name, data, d)
	default:
		if data, err = inflate(data, MaxUpload); err != nil {
			reply(w, answer{Errors: fieldErrors{"file": fmt.Sprintf("%s: %v", name, err)}})
			return
		}
		a, err = s.checkReport(name, data, d)
	}
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, a)
}

// upload reads the form's file, within MaxUpload.
func upload(r *http.Request, errs fieldErrors) (string, []byte) {
	f, hdr, err := r.FormFile("file")
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			errs.add("file", fmt.Errorf("the file is larger than the %d MiB allowed", MaxUpload>>20))
		case errors.Is(err, http.ErrMissingFile):
			errs.add("file", errors.New("choose or drop a file: an Nsight Compute CSV export, a torch.profiler trace or a workload YAML"))
		default:
			errs.add("file", err)
		}
		return "", nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxUpload+1))
	if err == nil && len(data) > MaxUpload {
		err = fmt.Errorf("the file is larger than the %d MiB allowed", MaxUpload>>20)
	}
	if err != nil {
		errs.add("file", err)
	}
	return path.Base(hdr.Filename), data
}

// isGzip tells gzip by its first bytes, as the CLI's inputs are told.
func isGzip(data []byte) bool { return len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b }

// inflate returns data decompressed when it is gzip (at most limit bytes),
// else data itself.
func inflate(data []byte, limit int64) ([]byte, error) {
	if !isGzip(data) {
		return data, nil
	}
	z, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("starts like gzip but is not: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(z, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading the gzip: %w", err)
	}
	if int64(len(out)) > limit {
		return nil, fmt.Errorf("decompresses to more than %d MiB", limit>>20)
	}
	return out, nil
}

// sniffBytes is how much of a file kindOf reads to tell its kind.
const sniffBytes = 4096

// kindOf tells an Nsight Compute export ("ncu"), a torch.profiler trace
// ("trace") and a workload ("workload") apart: by the file's extension,
// else by its first bytes. A gzip file is told by the name under .gz and by
// its content after decompression, as the CLI reads it.
func kindOf(name string, data []byte) string {
	if isGzip(data) {
		if strings.EqualFold(path.Ext(name), ".gz") {
			name = strings.TrimSuffix(name, path.Ext(name))
		}
		z, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return "trace" // the trace reader says what is wrong with it
		}
		data, _ = io.ReadAll(io.LimitReader(z, sniffBytes))
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".csv":
		return "ncu"
	case ".json":
		return "trace"
	case ".yaml", ".yml":
		return "workload"
	}
	for _, line := range strings.Split(string(data[:min(len(data), sniffBytes)]), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "" || strings.HasPrefix(t, "#"):
			continue
		case strings.HasPrefix(t, "{") || strings.HasPrefix(t, "["):
			return "trace"
		case strings.HasPrefix(t, `"`) || strings.HasPrefix(t, "=="): // ==PROF==, ==WARNING==
			return "ncu"
		}
		break
	}
	return "workload"
}

// checkReport is `gpucalc check FILE --format html`.
func (s *server) checkReport(name string, data []byte, d devices.Device) (answer, error) {
	wl, err := ops.ParseWorkload(name, data)
	if err != nil {
		return answer{Errors: fieldErrors{"file": err.Error()}}, nil
	}
	rv := reports.Review{}
	if d.Name == "" {
		if d, err = s.device(defaultDevice); err != nil {
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
	cli := "gpucalc check " + shellQuote(name) + " --format html"
	if rv.Origin == "" {
		cli += " --device " + shellQuote(deviceKey(d))
	}
	if s.Datasheet {
		cli += " --datasheet"
	}
	return answer{View: rv, HTML: buf.String(), CLI: cli}, nil
}

// defaultDevice is the CLI's default device.
const defaultDevice = "h100"

// ncuReport is `gpucalc ncu FILE`, with its chart.
func (s *server) ncuReport(name string, data []byte, d devices.Device) (answer, error) {
	var in io.Reader = bytes.NewReader(data)
	if isGzip(data) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return answer{Errors: fieldErrors{"file": fmt.Sprintf("%s: starts like gzip but is not: %v", name, err)}}, nil
		}
		in = z
	}
	ks, err := ncu.Read(in)
	if err != nil {
		return answer{Errors: fieldErrors{"file": fmt.Sprintf("%s: %v", name, err)}}, nil
	}
	cli := "gpucalc ncu " + shellQuote(name)
	origin := "from --device"
	if d.Name == "" {
		c, err := ncu.ExportDevice(s.Catalog, ks)
		if err != nil {
			return answer{Errors: fieldErrors{"device": err.Error() + "; pick the device"}}, nil
		}
		if s.Datasheet {
			c = c.Datasheet()
		}
		d, origin = c, "from the export"
	} else {
		cli += " --device " + shellQuote(deviceKey(d))
	}
	if s.Datasheet {
		cli += " --datasheet"
	}
	as := make([]ncu.Analysis, len(ks))
	for i, k := range ks {
		as[i] = ncu.Analyze(k, d)
	}
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
func (s *server) traceReport(name string, data []byte, d devices.Device) (answer, error) {
	tr, err := trace.Read(bytes.NewReader(data))
	if err != nil {
		return answer{Errors: fieldErrors{"file": fmt.Sprintf("%s: %v", name, err)}}, nil
	}
	cli := "gpucalc trace " + shellQuote(name)
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
		cli += " --device " + shellQuote(deviceKey(d))
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
	an, err := trace.Analyze(tr, m, arch)
	if err != nil {
		return answer{Errors: fieldErrors{"file": fmt.Sprintf("%s: %v", name, err)}}, nil
	}
	a := answer{View: reports.TraceView{DeviceOrigin: origin, Analysis: an}, Tables: tablesOf(reports.Trace(an, origin, 10)), CLI: cli}
	fig, err := newFigure("trace", "Ops of the trace on the roofline", reports.TraceChart(an, d), rooflineSize)
	if err != nil {
		return answer{}, err
	}
	a.Charts = []figure{fig}
	return a, nil
}
