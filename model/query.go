package model

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/query"
	"github.com/gpucalc/gpucalc/roofline"
)

// The model question's defaults besides DefaultBatch and DefaultPrompt:
// the one definition the CLI's flags and the web form's fields start from.
const (
	DefaultTP     = 1
	DefaultCtx    = 0 // the prompt
	DefaultGen    = 0 // no end-to-end time
	DefaultDType  = "bf16"
	DefaultEngine = Graph
)

// FailNoFit is the condition --fail-on names: the model does not fit.
const FailNoFit = "no-fit"

// Query is the model question (`gpucalc model MODEL` and the web's model
// form): each field is the argument or a flag, as given. NewQuery gives
// the defaults.
type Query struct {
	// Model is the argument: a built-in's name (Resolve), or the name of
	// the config.json whose contents are Config.
	Model  string
	Config []byte
	Name   string // --name: the label in the output ("": the built-in's or the file's)

	Devices devices.Choice // --device / --devices

	TP     int64 // --tp
	EP     int64 // --ep (0: none)
	MoETP  int64 // --moe-tp (0: 1 with --ep, else --tp)
	Batch  int64 // --batch
	Prompt int64 // --prompt
	Ctx    int64 // --ctx
	Gen    int64 // --gen

	DType     string // --dtype
	Weights   string // --weights ("": the config's quantization_config, else --dtype)
	KV        string // --kv ("": --dtype)
	Engine    string // --engine
	FullCache bool   // --full-cache
	Ops       bool   // --ops: list every op
	FailOn    string // --fail-on: "" or FailNoFit

	// Catalog is where devices are looked up (nil: the built-in one);
	// Datasheet looks them up as --datasheet does.
	Catalog   *devices.Catalog
	Datasheet bool
}

// NewQuery returns the question about model with every flag at its
// default.
func NewQuery(model string) Query {
	return Query{Model: model, TP: DefaultTP, Batch: DefaultBatch, Prompt: DefaultPrompt, Ctx: DefaultCtx, Gen: DefaultGen,
		DType: DefaultDType, Engine: string(DefaultEngine)}
}

// Answer is what the model question answers: the model, the request as
// the config completes it, and a report per device (side by side, a device
// that cannot run the model says why in its report).
type Answer struct {
	Config  Config
	Request Request
	Devices []devices.Chosen
	Reports []Report
}

// Request checks the flags and turns them into the calculation's request
// (before the config's defaults).
func (q Query) Request() (Request, error) {
	var errs query.Errors
	r := Request{TP: q.TP, EP: q.EP, MoETP: q.MoETP, Batch: q.Batch, Prompt: q.Prompt, Ctx: q.Ctx, Gen: q.Gen, FullCache: q.FullCache}
	for _, x := range []struct {
		flag   string
		v, min int64
	}{{"tp", q.TP, 1}, {"batch", q.Batch, 1}, {"prompt", q.Prompt, 1}, {"ctx", q.Ctx, 0}, {"gen", q.Gen, 0}, {"ep", q.EP, 0}, {"moe-tp", q.MoETP, 0}} {
		if x.v < x.min {
			errs = append(errs, query.FieldError{Field: x.flag, Value: strconv.FormatInt(x.v, 10), Allowed: fmt.Sprintf("expected %d or more", x.min)})
		}
	}
	if len(errs) == 0 {
		if _, err := ExpertLayout(q.TP, q.EP, q.MoETP); err != nil {
			errs = append(errs, query.FieldError{Field: "ep", Value: strconv.FormatInt(q.EP, 10), Allowed: err.Error()})
		}
	}
	var err error
	if r.Activations, err = devices.ParseDType(q.DType); err != nil {
		errs = append(errs, query.FieldError{Field: "dtype", Value: q.DType, Allowed: err.Error()})
	}
	if q.Weights != "" {
		if r.Weights, err = ParseWeightType(q.Weights); err != nil {
			errs = append(errs, query.FieldError{Field: "weights", Value: q.Weights, Allowed: err.Error()})
		}
	}
	if q.KV != "" {
		if r.KV, err = devices.ParseDType(q.KV); err != nil {
			errs = append(errs, query.FieldError{Field: "kv", Value: q.KV, Allowed: err.Error()})
		}
	}
	if r.Engine, err = ParseEngine(q.Engine); err != nil {
		errs = append(errs, query.FieldError{Field: "engine", Value: q.Engine, Allowed: "expected graph or eager"})
	}
	if q.FailOn != "" && q.FailOn != FailNoFit {
		errs = append(errs, query.FieldError{Field: "fail-on", Value: q.FailOn, Allowed: "expected " + FailNoFit})
	}
	return r, errs.Err()
}

// Load returns the model the query names: its config.json, else the
// built-in. A name that is no built-in is a field error (with the closest
// names); a config that does not parse is an error of its input.
func (q Query) Load() (Config, error) {
	var c Config
	var err error
	if q.Config != nil {
		c, err = Parse(q.Model, q.Config)
	} else if c, err = LoadBuiltin(q.Model); err != nil {
		return c, &query.FieldError{Field: "model", Value: q.Model, Allowed: err.Error(), Source: query.FromArg}
	}
	if err == nil && q.Name != "" {
		c.Name = q.Name
	}
	return c, err
}

// Validate returns the query's field errors, and any other error that
// stops it (a config that does not parse).
func (q Query) Validate() error {
	_, err := q.Answer()
	return err
}

// Answer validates the query and answers it on each device.
func (q Query) Answer() (Answer, error) {
	r, reqErr := q.Request()
	ds, devErr := q.Devices.Resolve(q.Catalog, q.Datasheet)
	c, loadErr := q.Load()
	var errs query.Errors
	for _, err := range []error{reqErr, devErr, loadErr} {
		errs = append(errs, query.Fields(err)...)
	}
	if len(errs) > 0 {
		return Answer{}, errs.Err()
	}
	for _, err := range []error{devErr, loadErr} {
		if err != nil {
			return Answer{}, err
		}
	}
	// The config's quantization_config gives the weight type --weights
	// does not.
	r, err := c.FillRequest(r)
	if err != nil {
		return Answer{}, &query.FieldError{Field: "weights", Value: q.Weights, Allowed: err.Error(), Source: query.FromArg}
	}
	a := Answer{Config: c, Request: r, Devices: ds}
	for _, d := range ds {
		m, err := roofline.New(d.Device)
		if err != nil {
			return Answer{}, err
		}
		rep, err := c.Serve(r, m)
		fix := q.fix(err)
		if err != nil && len(ds) > 1 {
			rep, err = c.notAvailable(r, m, err) // one device's gap does not abort the others
			if rep.Error != "" {
				rep.Error += fix
			}
		}
		if err != nil {
			return Answer{}, &query.FieldError{Field: "model", Value: q.Model, Allowed: c.Name + ": " + err.Error() + fix, Source: query.FromArg}
		}
		a.Reports = append(a.Reports, rep)
	}
	if err := Answered(c.Name, a.Reports); err != nil {
		return Answer{}, &query.FieldError{Field: "devices", Value: q.Model, Allowed: err.Error(), Source: query.FromArg}
	}
	return a, nil
}

// fix names the flags that move the request off a type the device cannot
// run (a roofline.UnsupportedError with a type to use instead): --dtype
// where it gave that type (it sets the weights and the KV cache too unless
// they are given), --weights and --kv where they did; "" when none did.
func (q Query) fix(err error) string {
	var ue *roofline.UnsupportedError
	if !errors.As(err, &ue) || ue.Suggest == "" {
		return ""
	}
	var flags []string
	for _, f := range []struct{ flag, value string }{{"dtype", q.DType}, {"weights", q.Weights}, {"kv", q.KV}} {
		if dt, err := devices.ParseDType(f.value); err == nil && dt == ue.DType {
			flags = append(flags, "--"+f.flag+" "+string(ue.Suggest))
		}
	}
	if len(flags) == 0 {
		return ""
	}
	return " (" + strings.Join(flags, " ") + ")"
}

// Unfit lists the devices the model does not fit on (at --tp), which
// --fail-on no-fit fails on.
func (a Answer) Unfit() []string {
	var out []string
	for _, r := range a.Reports {
		if r.NotAvailable == "" && !r.Fits() {
			out = append(out, r.Device)
		}
	}
	return out
}

// Args is the command line that asks the query: `gpucalc model MODEL` and
// the flags that differ from their defaults.
func (q Query) Args() query.Args {
	var a query.Args
	a.Word("model")
	a.Word(q.Model)
	q.Devices.Args(&a)
	if q.Name != "" {
		a.Add("name", q.Name)
	}
	query.Changed(&a, "tp", q.TP, DefaultTP)
	query.Changed(&a, "ep", q.EP, 0)
	query.Changed(&a, "moe-tp", q.MoETP, 0)
	query.Changed(&a, "batch", q.Batch, DefaultBatch)
	query.Changed(&a, "prompt", q.Prompt, DefaultPrompt)
	query.Changed(&a, "ctx", q.Ctx, DefaultCtx)
	query.Changed(&a, "gen", q.Gen, DefaultGen)
	query.Changed(&a, "dtype", q.DType, DefaultDType)
	query.Changed(&a, "weights", q.Weights, "")
	query.Changed(&a, "kv", q.KV, "")
	query.Changed(&a, "engine", q.Engine, string(DefaultEngine))
	query.Changed(&a, "fail-on", q.FailOn, "")
	a.Bool("full-cache", q.FullCache)
	a.Bool("ops", q.Ops)
	a.Bool("datasheet", q.Datasheet)
	return a
}
