package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/roofline"
)

// modelDefaults are the model form's defaults: the CLI's.
var modelDefaults = map[string]string{
	"source": "builtin", "model": "llama-3.1-8b", "config": "", "devices": "h100",
	"tp": "1", "batch": strconv.Itoa(model.DefaultBatch), "prompt": strconv.Itoa(model.DefaultPrompt), "ctx": "0", "gen": "0",
	"dtype": "bf16", "weights": "", "kv": "", "full_cache": "", "ops": "",
}

func (s *server) modelPage(w http.ResponseWriter, r *http.Request) {
	q := formValues(r, modelDefaults)
	p := page{Title: "Model", Nav: "model", Q: q}
	p.Checks = s.deviceChecks(q["devices"])
	for _, b := range model.Builtins() {
		p.Examples = append(p.Examples, option{b.Name, b.Name, b.Name == strings.ToLower(strings.TrimSpace(q["model"]))})
	}
	s.render(w, "model.html", p)
}

// model answers the model form: the view of `gpucalc model --format
// json`, its tables and the decode step's roofline chart.
func (s *server) model(r *http.Request) (answer, error) {
	q := formValues(r, modelDefaults)
	errs := fieldErrors{}
	args := []string{"gpucalc", "model"}
	flag := func(name, v string) { args = append(args, "--"+name, shellQuote(v)) }

	var c model.Config
	var err error
	switch q["source"] {
	case "builtin":
		if c, err = model.LoadBuiltin(q["model"]); err != nil {
			errs.add("model", err)
		}
		args = append(args, shellQuote(q["model"]))
	case "config":
		// model.Parse refuses more than model.MaxLayers layers before it
		// builds anything per layer.
		if c, err = model.Parse("config.json", []byte(q["config"])); err != nil {
			errs.add("config", err)
		}
		args = append(args, "config.json")
	default:
		errs.add("source", fmt.Errorf("source %q: expected builtin or config", q["source"]))
	}
	devs, keys := s.devicesOf(q["devices"], errs)
	if len(keys) == 1 {
		flag("device", keys[0])
	} else if len(keys) > 1 {
		flag("devices", strings.Join(keys, ","))
	}

	var req model.Request
	for _, f := range []struct {
		name string
		v    *int64
		min  int64
	}{{"tp", &req.TP, 1}, {"batch", &req.Batch, 1}, {"prompt", &req.Prompt, 1}, {"ctx", &req.Ctx, 0}, {"gen", &req.Gen, 0}} {
		v, err := strconv.ParseInt(strings.TrimSpace(q[f.name]), 10, 64)
		switch {
		case err != nil:
			errs.add(f.name, fmt.Errorf("%q is not a whole number", q[f.name]))
		case v < f.min:
			errs.add(f.name, fmt.Errorf("%d: expected %d or more", v, f.min))
		case strings.TrimSpace(q[f.name]) != modelDefaults[f.name]:
			flag(f.name, strconv.FormatInt(v, 10))
		}
		*f.v = v
	}
	if req.Activations, err = devices.ParseDType(q["dtype"]); err != nil {
		errs.add("dtype", err)
	} else if q["dtype"] != modelDefaults["dtype"] {
		flag("dtype", q["dtype"])
	}
	if q["weights"] != "" {
		if req.Weights, err = model.ParseWeightType(q["weights"]); err != nil {
			errs.add("weights", err)
		}
		flag("weights", q["weights"])
	}
	if q["kv"] != "" {
		if req.KV, err = devices.ParseDType(q["kv"]); err != nil {
			errs.add("kv", err)
		}
		flag("kv", q["kv"])
	}
	if req.FullCache = q["full_cache"] != ""; req.FullCache {
		args = append(args, "--full-cache")
	}
	ops := q["ops"] != ""
	if ops {
		args = append(args, "--ops")
	}
	if s.Datasheet {
		args = append(args, "--datasheet")
	}
	cli := strings.Join(args, " ")
	if q["source"] == "config" {
		cli = "# save the config as config.json, then:\n" + cli
	}
	if len(errs) > 0 {
		return answer{Errors: errs, CLI: cli}, nil
	}
	if req, err = c.FillRequest(req); err != nil {
		return answer{Errors: fieldErrors{"weights": err.Error()}, CLI: cli}, nil
	}
	var rs []model.Report
	for _, d := range devs {
		if err := r.Context().Err(); err != nil {
			return answer{CLI: cli}, err
		}
		m, err := roofline.New(d)
		if err != nil {
			return answer{}, err
		}
		serve := c.Serve
		if len(devs) > 1 {
			serve = c.ServeBeside // one device's gap does not abort the others
		}
		rep, err := serve(req, m)
		if err != nil {
			errs.add("", fmt.Errorf("%s on %s: %w", c.Name, d.Name, err))
			continue
		}
		rs = append(rs, rep)
	}
	if err := model.Answered(c.Name, rs); err != nil && len(errs) == 0 {
		errs.add("devices", err)
	}
	if len(errs) > 0 {
		return answer{Errors: errs, CLI: cli}, nil
	}
	a := answer{Tables: tablesOf(reports.ModelTables(c.Name, req, rs, "", ops)), CLI: cli}
	if len(rs) == 1 {
		a.View = rs[0]
	} else {
		a.View = rs
	}
	// A model that fits on none of the devices has no times to draw.
	if ch, err := reports.ModelDecodeChart(c.Name, req, devs, rs); err == nil {
		fig, err := newFigure("model", ch.Title, ch, rooflineSize)
		if err != nil {
			return answer{}, err
		}
		a.Charts = []figure{fig}
	}
	return a, nil
}

// devicesOf resolves a comma-separated list of devices; the second result
// is each device's key for the command line.
func (s *server) devicesOf(list string, errs fieldErrors) ([]devices.Device, []string) {
	var devs []devices.Device
	var keys []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		d, err := s.device(n)
		if err != nil {
			errs.add("devices", err)
			continue
		}
		devs, keys = append(devs, d), append(keys, d.Key())
	}
	if len(devs) == 0 {
		errs.add("devices", errors.New("pick one or more devices"))
	}
	return devs, keys
}

// deviceChecks are the device checkboxes, those in list checked.
func (s *server) deviceChecks(list string) []option {
	chosen := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		if d, err := s.Catalog.Lookup(strings.TrimSpace(n)); err == nil {
			chosen[d.Name] = true
		}
	}
	var out []option
	for _, d := range s.Catalog.Devices() {
		out = append(out, option{d.Key(), d.Name, chosen[d.Name]})
	}
	return out
}
