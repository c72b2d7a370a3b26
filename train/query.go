package train

import (
	"fmt"
	"strconv"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/query"
	"github.com/gpucalc/gpucalc/roofline"
)

// The train question's defaults besides DefaultBatch, DefaultSeq,
// DefaultRank and DefaultAlpha: the one definition the CLI's flags start
// from.
const (
	DefaultMethod    = Full
	DefaultPrecision = BF16
	DefaultOptimizer = AdamW
	DefaultCkpt      = NoCkpt
	DefaultGPUs      = 1
	DefaultTP        = 1
	DefaultZeRO      = 0
	DefaultTargets   = "all-linear"
)

// Query is the train question (`gpucalc train MODEL`): each field is the
// argument or a flag, as given. NewQuery gives the defaults.
type Query struct {
	// Model is the argument: a built-in's name, or the name of the
	// config.json whose contents are Config (see model.Query).
	Model  string
	Config []byte
	Name   string // --name

	Devices devices.Choice // --device / --devices

	Method      string // --method
	Precision   string // --precision
	Optimizer   string // --optimizer
	Ckpt        string // --ckpt
	Batch       int64  // --batch
	Seq         int64  // --seq
	GPUs        int64  // --gpus
	TP          int64  // --tp
	ZeRO        int64  // --zero
	BucketView  bool   // --bucket-view
	LoRARank    int64  // --lora-rank
	LoRAAlpha   int64  // --lora-alpha
	LoRATargets string // --lora-targets

	// Catalog is where devices are looked up (nil: the built-in one);
	// Datasheet looks them up as --datasheet does.
	Catalog   *devices.Catalog
	Datasheet bool
}

// NewQuery returns the question about training model with every flag at
// its default.
func NewQuery(model string) Query {
	return Query{Model: model, Method: string(DefaultMethod), Precision: string(DefaultPrecision), Optimizer: string(DefaultOptimizer),
		Ckpt: string(DefaultCkpt), Batch: DefaultBatch, Seq: DefaultSeq, GPUs: DefaultGPUs, TP: DefaultTP, ZeRO: DefaultZeRO,
		LoRARank: DefaultRank, LoRAAlpha: DefaultAlpha, LoRATargets: DefaultTargets}
}

// Answer is what the train question answers: the model, the request and
// a result per device.
type Answer struct {
	Config  model.Config
	Request Request
	Devices []devices.Chosen
	Results []Result
}

// Request checks the flags and builds the step's request.
func (q Query) Request() (Request, error) {
	r := Request{Method: Method(q.Method), Precision: Precision(q.Precision), Optimizer: Optimizer(q.Optimizer), Ckpt: Ckpt(q.Ckpt),
		Batch: q.Batch, Seq: q.Seq, GPUs: q.GPUs, TP: q.TP, ZeRO: q.ZeRO, BucketView: q.BucketView, LoRARank: q.LoRARank, LoRAAlpha: q.LoRAAlpha}
	var errs query.Errors
	for _, x := range []struct {
		flag string
		v    int64
	}{{"batch", q.Batch}, {"seq", q.Seq}, {"gpus", q.GPUs}, {"tp", q.TP}, {"lora-rank", q.LoRARank}, {"lora-alpha", q.LoRAAlpha}} {
		if x.v < 1 {
			errs = append(errs, query.FieldError{Field: x.flag, Value: strconv.FormatInt(x.v, 10), Allowed: "expected 1 or more"})
		}
	}
	if len(errs) > 0 {
		return r, errs.Err()
	}
	if r.Method != LoRA {
		r.LoRARank, r.LoRAAlpha = 0, 0
		return r, nil
	}
	t, err := ParseTargets(q.LoRATargets)
	if err != nil {
		return r, &query.FieldError{Field: "lora-targets", Value: q.LoRATargets, Allowed: err.Error()}
	}
	r.LoRATargets = t
	return r, nil
}

// Validate returns the query's field errors, and any other error that
// stops it.
func (q Query) Validate() error {
	_, err := q.answer(false)
	return err
}

// Answer validates the query and analyses the step on each device.
func (q Query) Answer() (Answer, error) { return q.answer(true) }

func (q Query) answer(full bool) (Answer, error) {
	r, err := q.Request()
	if err != nil {
		return Answer{}, err
	}
	c, err := model.Query{Model: q.Model, Config: q.Config, Name: q.Name}.Load()
	if err != nil {
		return Answer{}, err
	}
	if err := r.Defaults().Validate(c); err != nil {
		// The request against the model as a whole: its own words.
		return Answer{}, &query.FieldError{Field: "model", Value: q.Model, Allowed: err.Error(), Source: query.FromArg}
	}
	ds, err := q.Devices.Resolve(q.Catalog, q.Datasheet)
	if err != nil || !full {
		return Answer{}, err
	}
	a := Answer{Config: c, Request: r, Devices: ds}
	for _, d := range ds {
		m, err := roofline.New(d.Device)
		if err != nil {
			return Answer{}, err
		}
		res, err := Analyze(c, r, m)
		if err != nil {
			return Answer{}, fmt.Errorf("%s on %s: %w", c.Name, d.Name, err)
		}
		a.Results = append(a.Results, res)
	}
	return a, nil
}

// Args is the command line that asks the query: `gpucalc train MODEL` and
// the flags that differ from their defaults.
func (q Query) Args() query.Args {
	var a query.Args
	a.Word("train")
	a.Word(q.Model)
	q.Devices.Args(&a)
	if q.Name != "" {
		a.Add("name", q.Name)
	}
	query.Changed(&a, "method", q.Method, string(DefaultMethod))
	query.Changed(&a, "precision", q.Precision, string(DefaultPrecision))
	query.Changed(&a, "optimizer", q.Optimizer, string(DefaultOptimizer))
	query.Changed(&a, "ckpt", q.Ckpt, string(DefaultCkpt))
	query.Changed(&a, "batch", q.Batch, DefaultBatch)
	query.Changed(&a, "seq", q.Seq, DefaultSeq)
	query.Changed(&a, "gpus", q.GPUs, DefaultGPUs)
	query.Changed(&a, "tp", q.TP, DefaultTP)
	query.Changed(&a, "zero", q.ZeRO, DefaultZeRO)
	a.Bool("bucket-view", q.BucketView)
	if Method(q.Method) == LoRA {
		if q.LoRARank != DefaultRank {
			a.Add("lora-rank", strconv.FormatInt(q.LoRARank, 10))
		}
		if q.LoRAAlpha != DefaultAlpha {
			a.Add("lora-alpha", strconv.FormatInt(q.LoRAAlpha, 10))
		}
		if q.LoRATargets != DefaultTargets {
			a.Add("lora-targets", q.LoRATargets)
		}
	}
	a.Bool("datasheet", q.Datasheet)
	return a
}
