package roofline

import (
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/query"
)

// Query is the roofline question (`gpucalc roofline` and the web's
// roofline form): ops given one by one as specs (--op) or a workload read
// from a file (--workload), on one device or several side by side.
type Query struct {
	Ops []string // --op: op specs (ops.Parse)
	// WorkloadFile is --workload, the name of the file whose ops
	// (ops.ReadWorkload) are Workload.
	WorkloadFile string
	Workload     *ops.Workload

	Devices devices.Choice // --device / --devices

	// Catalog is where devices are looked up (nil: the built-in one);
	// Datasheet looks them up as --datasheet does.
	Catalog   *devices.Catalog
	Datasheet bool

	// L2 and Launch are --l2 and --launch, the measurement conditions
	// (ParseL2, ParseLaunch; "" is the default, cold and eager).
	L2, Launch string
}

// Answer is what the roofline question answers: the workload, the devices,
// each device's roofline model and the workload priced on each (Compare:
// side by side, a device that cannot run it says why).
type Answer struct {
	Workload ops.Workload
	Devices  []devices.Chosen
	Models   []*Model
	Priced   []Priced
	// Conditions are the measurement conditions every model prices under.
	Conditions Conditions
}

// workload is the workload the query names, with the field errors of its op
// specs.
func (q Query) workload() (ops.Workload, error) {
	if q.Workload != nil {
		return *q.Workload, nil
	}
	var errs query.Errors
	w := ops.Workload{Name: "ops"}
	for _, s := range q.Ops {
		o, err := ops.Parse(s)
		if err != nil {
			errs = append(errs, query.FieldError{Field: "op", Value: s, Allowed: err.Error()})
			continue
		}
		w.Entries = append(w.Entries, ops.Entry{Op: o, Count: 1})
	}
	if len(q.Ops) == 0 {
		errs = append(errs, query.FieldError{Field: "op", Allowed: "give an op spec, such as: matmul m=4096 n=4096 k=4096 dtype=bf16, or a workload file (--workload)"})
	}
	return w, errs.Err()
}

// Validate returns the query's field errors (op specs, devices).
func (q Query) Validate() error {
	_, err := q.resolve()
	return err
}

func (q Query) resolve() (Answer, error) {
	w, wErr := q.workload()
	ds, dErr := q.Devices.Resolve(q.Catalog, q.Datasheet)
	errs := append(query.Fields(wErr), query.Fields(dErr)...)
	c, cErr := q.conditions()
	errs = append(errs, cErr...)
	if len(errs) > 0 {
		return Answer{}, errs.Err()
	}
	if dErr != nil {
		return Answer{}, dErr
	}
	return Answer{Workload: w, Devices: ds, Conditions: c}, nil
}

// conditions are the query's measurement conditions, with the field
// errors of --l2 and --launch.
func (q Query) conditions() (Conditions, query.Errors) {
	var errs query.Errors
	l2, err := ParseL2(q.L2)
	if err != nil {
		errs = append(errs, query.FieldError{Field: "l2", Value: q.L2, Allowed: "cold or warm"})
	}
	launch, err := ParseLaunch(q.Launch)
	if err != nil {
		errs = append(errs, query.FieldError{Field: "launch", Value: q.Launch, Allowed: "eager or graph"})
	}
	return Conditions{L2: l2, Launch: launch}, errs
}

// Answer validates the query and prices the workload on each device.
func (q Query) Answer() (Answer, error) {
	a, err := q.resolve()
	if err != nil {
		return a, err
	}
	for _, d := range a.Devices {
		m, err := New(d.Device)
		if err != nil {
			return Answer{}, err
		}
		a.Models = append(a.Models, m.Under(a.Conditions))
	}
	if a.Priced, err = Compare(a.Models, a.Workload); err != nil {
		return Answer{}, err
	}
	return a, nil
}

// Args is the command line that asks the query.
func (q Query) Args() query.Args {
	var a query.Args
	a.Word("roofline")
	if q.Workload != nil {
		a.Add("workload", q.WorkloadFile)
	} else {
		for _, s := range q.Ops {
			a.Add("op", s)
		}
	}
	q.Devices.Args(&a)
	a.Bool("datasheet", q.Datasheet)
	if c, errs := q.conditions(); len(errs) == 0 {
		if c.L2 != DefaultL2 {
			a.Add("l2", string(c.L2))
		}
		if c.Launch != DefaultLaunch {
			a.Add("launch", string(c.Launch))
		}
	}
	return a
}
