package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/query"
	"github.com/gpucalc/gpucalc/reports"
)

// modelForm are the model form's fields and their defaults: the model
// question's (model.NewQuery), on the default device. A field is named as
// the CLI's flag; source says whether model names a built-in or config
// holds a pasted config.json.
func (s *server) modelForm(r *http.Request) map[string]string {
	d := model.NewQuery("llama-3.1-8b")
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	return formValues(r, map[string]string{
		"source": "builtin", "model": d.Model, "config": "", "devices": s.defaultKey(),
		"tp": i(d.TP), "ep": i(d.EP), "moe-tp": i(d.MoETP), "batch": i(d.Batch), "prompt": i(d.Prompt), "ctx": i(d.Ctx), "gen": i(d.Gen),
		"dtype": d.DType, "weights": "", "kv": "", "full-cache": "", "ops": "",
	})
}

func (s *server) modelPage(w http.ResponseWriter, r *http.Request) {
	q := s.modelForm(r)
	p := page{Title: "Model", Nav: "model", Q: q}
	p.Checks = s.deviceChecks(q["devices"])
	for _, b := range model.Builtins() {
		p.Examples = append(p.Examples, option{b.Name, b.Name, b.Name == strings.ToLower(strings.TrimSpace(q["model"]))})
	}
	s.render(w, "model.html", p)
}

// modelQuery maps the form onto the model question.
func (s *server) modelQuery(f map[string]string) (model.Query, query.Errors) {
	var errs query.Errors
	q := model.Query{Model: f["model"], Devices: devices.Named(formList(f["devices"])),
		DType: f["dtype"], Weights: f["weights"], KV: f["kv"], Engine: string(model.DefaultEngine),
		FullCache: f["full-cache"] != "", Ops: f["ops"] != "", Catalog: s.Catalog, Datasheet: s.Datasheet}
	switch f["source"] {
	case "builtin":
	case "config":
		q.Model, q.Config = "config.json", []byte(f["config"])
	default:
		errs = append(errs, query.FieldError{Field: "source", Value: f["source"], Allowed: "expected builtin or config"})
	}
	for _, x := range []struct {
		field string
		v     *int64
	}{{"tp", &q.TP}, {"ep", &q.EP}, {"moe-tp", &q.MoETP}, {"batch", &q.Batch}, {"prompt", &q.Prompt}, {"ctx", &q.Ctx}, {"gen", &q.Gen}} {
		*x.v = int64(formInt(f, x.field, &errs))
	}
	return q, errs
}

// deviceFields: a device list's errors belong to the form's devices
// field, whether the list named one (--device) or several.
var deviceFields = map[string]string{"device": "devices"}

// model answers the model form: the view of `gpucalc model --format
// json`, its tables and the decode step's roofline chart.
func (s *server) model(r *http.Request) (answer, error) {
	f := s.modelForm(r)
	q, errs := s.modelQuery(f)
	if len(errs) > 0 {
		return answer{Errors: formErrors(errs, deviceFields)}, nil
	}
	cli := q.Args().String()
	if q.Config != nil {
		cli = "# save the config as config.json, then:\n" + cli
	}
	a, err := q.Answer()
	if fe := query.Fields(err); fe != nil {
		return answer{Errors: formErrors(fe, deviceFields), CLI: cli}, nil
	}
	if err != nil {
		if q.Config != nil {
			return answer{Errors: fieldErrors{"config": err.Error()}, CLI: cli}, nil
		}
		return answer{}, err
	}
	out := answer{Tables: tablesOf(reports.ModelTables(a.Config.Name, a.Request, a.Reports, "", q.Ops)), CLI: cli}
	if len(a.Reports) == 1 {
		out.View = a.Reports[0]
	} else {
		out.View = a.Reports
	}
	// A model that fits on none of the devices has no times to draw.
	if ch, err := reports.ModelDecodeChart(a.Config.Name, a.Request, devicesOf(a.Devices), a.Reports); err == nil {
		fig, err := newFigure("model", ch.Title, ch, rooflineSize)
		if err != nil {
			return answer{}, err
		}
		out.Charts = []figure{fig}
	}
	return out, nil
}

// devicesOf lists the devices of ds.
func devicesOf(ds []devices.Chosen) []devices.Device {
	out := make([]devices.Device, len(ds))
	for i, d := range ds {
		out[i] = d.Device
	}
	return out
}

// formList splits a comma-separated field as the CLI splits a list flag's
// value; an empty field is an empty list.
func formList(v string) []string {
	if strings.TrimSpace(v) == "" {
		return []string{}
	}
	return strings.Split(v, ",")
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
