package occupancy

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/query"
	"github.com/gpucalc/gpucalc/units"
)

// The occupancy question's defaults: the one definition the CLI's flags and
// the web form's fields start from.
const (
	DefaultThreads    = 256
	DefaultRegs       = 32
	DefaultSmem       = "0"
	DefaultStaticSmem = "0"
	DefaultCarveout   = "default"
	DefaultBarriers   = 1
	DefaultMaxThreads = 0
)

// Query is the occupancy question as the user asks it, on the CLI
// (`gpucalc occupancy` and the kernel flags of its subcommands) or in the
// web form: each field is a flag (its name in the comment), sizes as typed.
// NewQuery gives the defaults.
type Query struct {
	Device devices.Choice // --device (one GPU)
	Arch   string         // --arch: a compute capability instead of a device

	Threads    int    // --threads
	Regs       int    // --regs
	Smem       string // --smem: the block's shared memory, static plus dynamic ("": the static part alone)
	StaticSmem string // --static-smem
	Carveout   string // --carveout
	Barriers   int    // --barriers
	MaxThreads int    // --max-threads

	Grid    int // --grid: waves of a grid of this many blocks (0: not asked)
	Cluster int // --cluster: clusters of this many blocks on the whole GPU (0: not asked)
	// GridGiven and ClusterGiven say that --grid and --cluster were
	// asked, so that --grid 0 is refused rather than left out.
	GridGiven, ClusterGiven bool

	// Catalog is where devices are looked up (nil: the built-in one);
	// Datasheet looks them up as --datasheet does.
	Catalog   *devices.Catalog
	Datasheet bool
}

// NewQuery returns the query with every field at its default.
func NewQuery() Query {
	return Query{Threads: DefaultThreads, Regs: DefaultRegs, Smem: "", StaticSmem: DefaultStaticSmem,
		Carveout: DefaultCarveout, Barriers: DefaultBarriers, MaxThreads: DefaultMaxThreads}
}

// Target names the query's device or, as a compute capability (sm_90,
// 9.0), its architecture: what a picker of both sets.
func (q *Query) Target(name string) {
	if _, err := devices.ParseCC(name); err == nil {
		q.Arch, q.Device = name, devices.Choice{}
		return
	}
	q.Arch, q.Device = "", devices.Choice{Device: name, DeviceGiven: true}
}

// Answer is what the occupancy question answers: the target, kernel and
// launch the query states, the result, its cliffs, and the waves and
// clusters when asked.
type Answer struct {
	Target   Target
	Kernel   Kernel
	Launch   Launch
	Defaults []string // the flags left at their defaults, to say so
	Result   Result
	Cliffs   Cliffs
	Waves    *Waves
	Clusters *Clusters
}

// Resolve turns the query's device and kernel fields into the
// calculation's inputs, with the field errors of each: what every
// occupancy question (the subcommands' too) starts from.
func (q Query) Resolve() (Target, Kernel, Launch, error) {
	var errs query.Errors
	t, err := q.target()
	if err != nil {
		if es := query.Fields(err); es != nil {
			errs = append(errs, es...)
		} else {
			return t, Kernel{}, Launch{}, err
		}
	}
	size := func(field, s string) int {
		b, err := units.ParseSize(s)
		switch {
		case err != nil:
			errs = append(errs, query.FieldError{Field: field, Value: s, Allowed: err.Error()})
		case b > math.MaxInt32:
			errs = append(errs, query.FieldError{Field: field, Value: s, Allowed: "far larger than any GPU's shared memory"})
		}
		return int(b)
	}
	static := size("static-smem", q.StaticSmem)
	smem := static
	if q.Smem != "" {
		smem = size("smem", q.Smem)
	}
	if len(errs) == 0 && static > smem {
		errs = append(errs, query.FieldError{Field: "static-smem", Value: q.StaticSmem, Allowed: "more than --smem " + q.Smem + ", the block's total (static plus dynamic)"})
	}
	c, err := ParseCarveout(q.Carveout)
	if err != nil {
		errs = append(errs, query.FieldError{Field: "carveout", Value: q.Carveout, Allowed: err.Error()})
	}
	for _, f := range []struct {
		field string
		v     int
	}{{"threads", q.Threads}, {"regs", q.Regs}, {"barriers", q.Barriers}, {"max-threads", q.MaxThreads}} {
		if f.v < 0 {
			errs = append(errs, query.FieldError{Field: f.field, Value: strconv.Itoa(f.v), Allowed: "must not be negative"})
		}
	}
	k := Kernel{Regs: q.Regs, StaticSmem: static, MaxThreads: q.MaxThreads, Barriers: q.Barriers}
	l := Launch{Threads: q.Threads, DynamicSmem: smem - static, Carveout: c}
	return t, k, l, errs.Err()
}

// target resolves --device or --arch.
func (q Query) target() (Target, error) {
	if q.Arch != "" {
		if q.Device.DeviceGiven {
			return Target{}, &query.FieldError{Field: "arch", Value: q.Arch, Allowed: "give --device or --arch, not both"}
		}
		cc, err := devices.ParseCC(q.Arch)
		if err == nil {
			var a devices.Arch
			if a, err = devices.ArchFor(cc); err == nil {
				return ArchTarget(a), nil
			}
		}
		return Target{}, &query.FieldError{Field: "arch", Value: q.Arch, Allowed: err.Error()}
	}
	ds, err := q.Device.Resolve(q.Catalog, q.Datasheet)
	if err != nil {
		return Target{}, err
	}
	t, err := DeviceTarget(ds[0].Device, ds[0].Origin)
	if err != nil {
		return Target{}, &query.FieldError{Field: "device", Value: ds[0].Name, Allowed: err.Error()}
	}
	return t, nil
}

// Validate returns every field error of the query: the flags' own and
// those only the architecture's limits tell (a block too large, too many
// registers, more shared memory than a block may have, a grid or cluster
// that cannot be counted). Any other error (a catalog that cannot be read)
// is returned as it is.
func (q Query) Validate() error {
	_, err := q.answer(false)
	return err
}

// Answer validates the query and answers it.
func (q Query) Answer() (Answer, error) { return q.answer(true) }

func (q Query) answer(full bool) (Answer, error) {
	t, k, l, err := q.Resolve()
	if err != nil {
		return Answer{}, err
	}
	a := Answer{Target: t, Kernel: k, Launch: l, Defaults: q.defaults()}
	a.Result = Calculate(t.Arch, k, l)
	if err := InputError(t.Arch, k, l, a.Result); err != nil {
		return Answer{}, err
	}
	if q.GridGiven {
		if t.SMs == 0 {
			return Answer{}, &query.FieldError{Field: "grid", Value: strconv.Itoa(q.Grid), Allowed: "needs the device's SM count: give --device instead of --arch"}
		}
		w, err := GridWaves(q.Grid, a.Result.Blocks, t.SMs)
		if err != nil {
			return Answer{}, &query.FieldError{Field: "grid", Value: strconv.Itoa(q.Grid), Allowed: err.Error()}
		}
		a.Waves = &w
	}
	if q.ClusterGiven {
		if t.SMs == 0 {
			return Answer{}, &query.FieldError{Field: "cluster", Value: strconv.Itoa(q.Cluster), Allowed: "counts clusters on the whole GPU and needs the device's SM count: give --device instead of --arch"}
		}
		c, err := ActiveClusters(t.Arch, a.Result, q.Cluster, t.SMs, t.GPCs)
		if err != nil {
			return Answer{}, &query.FieldError{Field: "cluster", Value: strconv.Itoa(q.Cluster), Allowed: "on " + t.Device + ": " + err.Error()}
		}
		a.Clusters = &c
	}
	if full {
		if a.Cliffs, err = FindCliffs(t.Arch, k, l); err != nil {
			return Answer{}, err
		}
	}
	return a, nil
}

// defaults lists the kernel flags left at their defaults, as the output
// states them.
func (q Query) defaults() []string {
	var out []string
	if q.Threads == DefaultThreads {
		out = append(out, "--threads "+strconv.Itoa(DefaultThreads))
	}
	if q.Regs == DefaultRegs {
		out = append(out, "--regs "+strconv.Itoa(DefaultRegs))
	}
	return out
}

// InputError explains a result's invalid input as a field error, with the
// numbers of the architecture; nil when the input is valid.
func InputError(a devices.Arch, k Kernel, l Launch, r Result) error {
	fe := func(field, value, allowed string, args ...any) error {
		return &query.FieldError{Field: field, Value: value, Allowed: fmt.Sprintf(allowed, args...)}
	}
	switch {
	case errors.Is(r.Err, ErrBlockSize):
		return fe("threads", strconv.Itoa(l.Threads), "a block has 1 to %d threads on cc %s", a.MaxThreadsPerBlock, a.CC)
	case errors.Is(r.Err, ErrRegisters):
		return fe("regs", strconv.Itoa(k.Regs), "a thread can use at most %d registers on cc %s (ptxas spills beyond that)", a.MaxRegsPerThread, a.CC)
	case errors.Is(r.Err, ErrStaticSmem):
		return fe("static-smem", sizeValue(k.StaticSmem), "static shared memory is limited to %s per block; allocate the rest dynamically", units.FormatSize(int64(a.SmemPerBlock)))
	case errors.Is(r.Err, ErrCarveout):
		return fe("carveout", l.Carveout.String(), "more than the %s of shared memory an SM has on cc %s", units.FormatSize(int64(a.SmemPerSM)), a.CC)
	case errors.Is(r.Err, ErrBarriers):
		return fe("barriers", strconv.Itoa(k.Barriers), "%v", r.Err)
	case errors.Is(r.Err, ErrMaxThreads):
		return fe("max-threads", strconv.Itoa(k.MaxThreads), "%v", r.Err)
	case errors.Is(r.Err, ErrNegative):
		return fe("smem", sizeValue(k.StaticSmem+l.DynamicSmem), "%v", r.Err)
	case r.Err != nil:
		return r.Err
	case errors.Is(r.Reason, ErrSmemPerBlock):
		reserve := ""
		if a.SmemReservedPerBlock > 0 {
			reserve = ", besides the 1 KiB CUDA reserves"
		}
		return fe("smem", sizeValue(k.StaticSmem+l.DynamicSmem), "a block can have at most %s of shared memory on cc %s (the opt-in maximum%s); this launch fails",
			units.FormatSize(int64(a.SmemPerBlockOptin)), a.CC, reserve)
	}
	return nil
}

// Args is the command line that asks the query: `gpucalc occupancy` and
// the flags that differ from their defaults.
func (q Query) Args() query.Args {
	var a query.Args
	a.Word("occupancy")
	q.Device.Args(&a)
	if q.Arch != "" {
		a.Add("arch", q.Arch)
	}
	q.KernelArgs(&a)
	if q.GridGiven {
		a.Add("grid", strconv.Itoa(q.Grid))
	}
	if q.ClusterGiven {
		a.Add("cluster", strconv.Itoa(q.Cluster))
	}
	a.Bool("datasheet", q.Datasheet)
	return a
}

// KernelArgs adds the kernel flags that differ from their defaults.
func (q Query) KernelArgs(a *query.Args) {
	query.Changed(a, "threads", q.Threads, DefaultThreads)
	query.Changed(a, "regs", q.Regs, DefaultRegs)
	if q.Smem != "" && q.Smem != DefaultSmem {
		a.Add("smem", q.Smem)
	}
	if q.StaticSmem != DefaultStaticSmem && q.StaticSmem != "" {
		a.Add("static-smem", q.StaticSmem)
	}
	if q.Carveout != DefaultCarveout {
		a.Add("carveout", q.Carveout)
	}
	if q.Barriers != DefaultBarriers {
		a.Add("barriers", strconv.Itoa(q.Barriers))
	}
	if q.MaxThreads != DefaultMaxThreads {
		a.Add("max-threads", strconv.Itoa(q.MaxThreads))
	}
}

// sizeValue writes a size as a flag's value: 48K when a whole number of
// KiB, else bytes.
func sizeValue(b int) string {
	if b%1024 == 0 {
		return strconv.Itoa(b/1024) + "K"
	}
	return strconv.Itoa(b)
}
