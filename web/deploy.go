package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/deploy"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/units"
)

// deployDefaults are the deploy form's defaults: an SLA search with the
// CLI's defaults for what it does not set.
var deployDefaults = map[string]string{
	"model": "llama-3.1-70b", "devices": "h100,h200,b200", "engine": deploy.DefaultEngine, "weights": "fp8",
	"isl": strconv.Itoa(deploy.DefaultISL), "osl": strconv.Itoa(deploy.DefaultOSL), "ttft": "2s", "tpot": "50ms", "gpus": "0",
}

func (s *server) deployPage(w http.ResponseWriter, r *http.Request) {
	q := formValues(r, deployDefaults)
	p := page{Title: "Deploy", Nav: "deploy", Q: q}
	p.Checks = s.deviceChecks(q["devices"])
	for _, b := range model.Builtins() {
		p.Examples = append(p.Examples, option{b.Name, b.Name, b.Name == strings.ToLower(strings.TrimSpace(q["model"]))})
	}
	s.render(w, "deploy.html", p)
}

// deploy answers the deploy form: the SLA search of `gpucalc deploy MODEL
// --ttft --tpot --devices`, its tables, its Pareto chart and its command
// line. The form's fields map onto deploy.Search, which validates them.
func (s *server) deploy(r *http.Request) (answer, error) {
	q := formValues(r, deployDefaults)
	errs := fieldErrors{}
	search := deploy.Search{Base: deploy.Query{Model: strings.TrimSpace(q["model"]), Engine: q["engine"], Weights: strings.TrimSpace(q["weights"])}}
	for _, f := range []struct {
		name string
		v    *int64
	}{{"isl", &search.Base.ISL}, {"osl", &search.Base.OSL}, {"gpus", &search.GPUs}} {
		v, err := strconv.ParseInt(strings.TrimSpace(q[f.name]), 10, 64)
		if err != nil {
			errs.add(f.name, errors.New("not a whole number"))
		}
		*f.v = v
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"ttft", &search.TTFT}, {"tpot", &search.TPOT}} {
		if strings.TrimSpace(q[f.name]) == "" {
			continue
		}
		v, err := units.ParseDuration(q[f.name])
		if err != nil {
			errs.add(f.name, err)
		}
		*f.v = v
	}
	var keys []string
	for _, n := range formList(q["devices"]) {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		d, err := s.device(n)
		if err != nil {
			errs.add("devices", err)
			continue
		}
		search.Devices, keys = append(search.Devices, d.Name), append(keys, d.Key())
	}
	if len(keys) == 0 && errs["devices"] == "" {
		errs.add("devices", errors.New("pick one or more devices"))
	}
	if _, err := model.Resolve(search.Base.Model); err != nil {
		errs.add("model", err)
	}
	cli := "gpucalc deploy"
	if len(errs) == 0 {
		for _, fe := range search.Validate() {
			errs[fe.Field] = fe.Error()
		}
		a := search
		a.Devices = keys
		cli = a.Args().String()
	}
	if len(errs) > 0 {
		return answer{Errors: errs, CLI: cli}, nil
	}
	res, err := search.Answer(nil)
	if err != nil {
		return answer{}, err
	}
	a := answer{View: reports.DeploySearchView{SearchResult: res}, Tables: tablesOf(reports.DeploySearchTables(res)), CLI: cli}
	ch := reports.DeployParetoChart(res)
	if fig, err := newFigure("pareto", ch.Title, ch, rooflineSize); err == nil {
		a.Charts = []figure{fig}
	}
	return a, nil
}
