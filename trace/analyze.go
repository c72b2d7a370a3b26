package trace

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/review"
	"github.com/gpucalc/gpucalc/roofline"
)

// Analysis is a trace set against one device. Times are in seconds.
type Analysis struct {
	Device string `json:"device"`
	// Ops are the top-level aten ops with GPU kernels, one row per name,
	// input shapes and arguments, by measured time (longest first).
	Ops []OpRow `json:"ops"`
	// Unattributed is kernel time no op could claim, by reason.
	Unattributed []Unattributed `json:"unattributed"`
	// Kernels are the distinct launches (name, grid, block, registers,
	// shared memory), by time.
	Kernels   []KernelRow   `json:"kernels"`
	Streams   []Stream      `json:"streams"`
	Transfers []TransferRow `json:"transfers"`
	Summary   Summary       `json:"summary"`
	// Findings are the design-review checks that apply to a measured step
	// (fusion, GEMM alignment, wave quantization) and the trace's own
	// (launch-bound stretches, low occupancy), by severity then saving.
	Findings []review.Finding `json:"findings"`
	// kernelOp is, per kernel of the trace, its row in Ops (-1: none).
	kernelOp []int
}

// OpRow is one op (name and arguments) with all its calls.
type OpRow struct {
	Name   string        `json:"name"`
	Shapes string        `json:"input_shapes"`
	DType  devices.DType `json:"dtype"`
	Calls  int           `json:"calls"`
	// Kernels is how many kernels the calls launched.
	Kernels int `json:"kernels"`
	// Measured is the summed duration of the calls' kernels.
	Measured float64 `json:"measured_seconds"`
	// Model is what one call costs as gpucalc ops; empty with Unmodelled
	// saying why when the op has no model.
	Model      []ops.Op `json:"model,omitempty"`
	Unmodelled string   `json:"unmodelled,omitempty"`
	// FLOPs and Bytes (ideal) are of all calls together.
	FLOPs             float64 `json:"flops"`
	Bytes             float64 `json:"bytes"`
	AchievedFLOPs     float64 `json:"achieved_flops_per_second"`
	AchievedBandwidth float64 `json:"achieved_bytes_per_second"`
	// LowerBound and Expected are the roofline's times for all calls.
	LowerBound float64 `json:"lower_bound_seconds"`
	Expected   float64 `json:"expected_seconds"`
	// Bound is what limits the expected time (memory, compute, launch);
	// Ceiling the compute ceiling's key (bf16_tensor, fp32).
	Bound        string  `json:"bound"`
	Ceiling      string  `json:"compute_ceiling"`
	CeilingFLOPs float64 `json:"compute_ceiling_flops_per_second"`
	// Efficiency is Expected / Measured: 1 runs as fast as the model
	// expects, less is slower.
	Efficiency float64 `json:"efficiency"`
	// Saved is the time the calls would save at the expected speed.
	Saved float64 `json:"saved_seconds"`
	// after counts, by row index, the ops whose kernels ran just before
	// this op's on its stream: the producer a fusion check pairs it with.
	after map[int]int
	// order is the row's index before the rows are sorted.
	order int
}

// Modelled reports whether the row has a roofline model.
func (r OpRow) Modelled() bool { return len(r.Model) > 0 }

// Unattributed is kernel time that belongs to no top-level aten op.
type Unattributed struct {
	Reason  string  `json:"reason"`
	Kernels int     `json:"kernels"`
	Time    float64 `json:"time_seconds"`
}

// Summary is the step as a whole.
type Summary struct {
	// KernelTime is the summed duration of every kernel; OpTime what the
	// ops claim and UnattributedTime the rest. OpTime + UnattributedTime
	// = KernelTime: nothing is lost.
	KernelTime       float64 `json:"kernel_seconds"`
	OpTime           float64 `json:"op_seconds"`
	UnattributedTime float64 `json:"unattributed_seconds"`
	Kernels          int     `json:"kernels"`
	// ModelledTime is the measured time of ops with a model, Expected
	// their expected time; UnmodelledTime the time of ops without.
	ModelledTime   float64 `json:"modelled_seconds"`
	Expected       float64 `json:"expected_seconds"`
	UnmodelledTime float64 `json:"unmodelled_seconds"`
	// Window is the GPU span: first activity's start to last's end, on
	// any stream.
	Window float64 `json:"gpu_window_seconds"`
	// LaunchOverhead is the roofline model's launch overhead per kernel
	// (its fixed cost less the kernel ramp); ShortKernels are the kernels that ran shorter, ShortTime their time.
	LaunchOverhead float64 `json:"launch_overhead_seconds"`
	ShortKernels   int     `json:"short_kernels"`
	ShortTime      float64 `json:"short_kernel_seconds"`
	// ReviewedExpected is the modelled ops' expected time as the design
	// review counts it (launch overhead included): what the findings'
	// shares are of.
	ReviewedExpected float64 `json:"reviewed_expected_seconds"`
	TransferTime     float64 `json:"transfer_seconds"`
	TransferBytes    int64   `json:"transfer_bytes"`
	// TopByTime and TopByLost index Ops: the costliest ops, and the ops
	// furthest (in seconds) from their expected time.
	TopByTime []int `json:"top_by_time"`
	TopByLost []int `json:"top_by_time_lost"`
}

// topN is how many ops the summary names.
const topN = 10

const usec = 1e-6

// Arch is the architecture the trace's kernels ran on: the compute
// capability its deviceProperties give, else device d's.
func Arch(t *Trace, d devices.Device) (devices.Arch, error) {
	if p, ok := t.gpu(); ok && p.ComputeMajor > 0 {
		return devices.ArchFor(devices.CC{Major: p.ComputeMajor, Minor: p.ComputeMinor})
	}
	return d.Limits()
}

// DeviceName is the GPU the trace ran on, from deviceProperties ("" when
// absent).
func (t *Trace) DeviceName() string {
	p, _ := t.gpu()
	return p.Name
}

// gpu is the deviceProperties entry of the GPU the kernels ran on (Read
// refuses kernels on GPUs that differ), else the first entry.
func (t *Trace) gpu() (DeviceProps, bool) {
	if t.Kernels.Len() > 0 {
		if p, ok := t.props(t.Kernels.At(0).Device); ok {
			return p, true
		}
	}
	if len(t.Devices) == 0 {
		return DeviceProps{}, false
	}
	return t.Devices[0], true
}

// props is the deviceProperties entry of device id.
func (t *Trace) props(id int) (DeviceProps, bool) {
	for _, p := range t.Devices {
		if p.ID == id {
			return p, true
		}
	}
	return DeviceProps{}, false
}

// Analyze joins the trace's kernels to its ops and sets each op against
// the roofline model m, each kernel against the occupancy of arch. It
// fails when every kernel was replayed from a CUDA graph.
func Analyze(t *Trace, m *roofline.Model, arch devices.Arch) (Analysis, error) {
	// Empty lists, not nil: JSON writes [] for a trace without any.
	a := Analysis{Device: m.Device().Name, Ops: []OpRow{}, Unattributed: []Unattributed{}, Kernels: []KernelRow{},
		Streams: []Stream{}, Transfers: []TransferRow{}, Findings: []review.Finding{}}
	// The rows of kernels, streams and transfers need no op: made on a
	// second core while the kernels are joined to their ops.
	var (
		kernels   []KernelRow
		strs      []Stream
		window    float64
		transfers []TransferRow
		apart     sync.WaitGroup
	)
	apart.Go(func() {
		kernels = kernelRows(&t.Kernels, arch)
		strs, window = streams(t)
		transfers = transferRows(&t.Transfers)
	})
	defer apart.Wait()
	j := newJoiner(t)
	rows := map[string]int{} // group key -> index in a.Ops
	// The row of each op seen by what it is made of: ops that share their
	// name, shapes and type lists (as the reader shares them) share a row
	// without their key being written out again.
	same := map[opIdentity]int{}
	callsSeen := make([]bool, t.Ops.Len())
	prev := map[int]int{} // stream -> row of the last call on it
	unattr := map[Link]*Unattributed{}
	compute := computeTypes(j.tr)
	a.kernelOp = make([]int, t.Kernels.Len())
	for ki := range t.Kernels.Len() {
		k := t.Kernels.At(ki)
		dur := k.Dur * usec
		a.Summary.KernelTime += dur
		a.Summary.Kernels++
		op, link := j.op(k.ExternalID, k.Correlation)
		a.kernelOp[ki] = -1
		if link != Linked {
			u := unattr[link]
			if u == nil {
				u = &Unattributed{Reason: linkReason[link]}
				unattr[link] = u
			}
			u.Kernels++
			u.Time += dur
			continue
		}
		id := identity(t.Ops.At(op))
		ri, ok := same[id]
		if !ok {
			key := groupKey(t.Ops.At(op))
			if ri, ok = rows[key]; !ok {
				ri = len(a.Ops)
				rows[key] = ri
				a.Ops = append(a.Ops, newRow(call{op: t.Ops.At(op), compute: compute[op]}))
				a.Ops[ri].order = ri
			}
			if len(same) < maxSame {
				same[id] = ri
			}
		}
		a.kernelOp[ki] = ri
		r := &a.Ops[ri]
		r.Kernels++
		r.Measured += dur
		if !callsSeen[op] {
			callsSeen[op] = true
			r.Calls++
			if p, ok := prev[k.Stream]; ok && p != ri {
				if r.after == nil {
					r.after = map[int]int{}
				}
				r.after[p]++
			}
		}
		prev[k.Stream] = ri
	}
	if g := unattr[Graph]; g != nil && g.Kernels == a.Summary.Kernels {
		return a, errors.New("every kernel was replayed from a CUDA graph (cudaGraphLaunch), which hides the ops that captured them: profile the step eagerly (without torch.compile's reduce-overhead mode or torch.cuda.graphs)")
	}
	for _, l := range []Link{Graph, NotAten, NoOp} {
		if u := unattr[l]; u != nil {
			a.Unattributed = append(a.Unattributed, *u)
			a.Summary.UnattributedTime += u.Time
		}
	}
	launch := m.FixedCost() - m.Efficiency().Ramp
	for i := range a.Ops {
		price(&a.Ops[i], m, launch)
		r := &a.Ops[i]
		a.Summary.OpTime += r.Measured
		if r.Modelled() {
			a.Summary.ModelledTime += r.Measured
			a.Summary.Expected += r.Expected
		} else {
			a.Summary.UnmodelledTime += r.Measured
		}
	}
	findings, reviewedExpected, err := reviewed(a.Ops, m.Device())
	if err != nil {
		return a, err
	}
	slices.SortStableFunc(a.Ops, func(x, y OpRow) int { return cmp.Compare(y.Measured, x.Measured) })
	a.renumberKernelOps()
	apart.Wait()
	a.Kernels, a.Streams, a.Summary.Window, a.Transfers = kernels, strs, window, transfers
	for _, tr := range a.Transfers {
		a.Summary.TransferTime += tr.Time
		a.Summary.TransferBytes += tr.Bytes
	}
	a.Summary.LaunchOverhead = launch
	for k := range t.Kernels.Pointers {
		if k.Dur*usec < a.Summary.LaunchOverhead {
			a.Summary.ShortKernels++
			a.Summary.ShortTime += k.Dur * usec
		}
	}
	a.Summary.TopByTime, a.Summary.TopByLost = top(a.Ops)
	a.Summary.ReviewedExpected = reviewedExpected
	a.Findings = sortFindings(measuredFindings(a), findings)
	return a, nil
}

var linkReason = map[Link]string{
	NoOp:    "no op: neither its External id nor its launch leads to a recorded op",
	NotAten: "not inside an aten op (a custom kernel or a library called directly)",
	Graph:   "replayed from a CUDA graph (cudaGraphLaunch)",
}

// computeTypes finds, for each top-level op, the narrowest floating type
// among its own and its descendants' tensors.
func computeTypes(tr *tree) []devices.DType {
	out := make([]devices.DType, tr.t.Ops.Len())
	for i := range tr.t.Ops.Len() {
		top := tr.top[i]
		if top < 0 {
			continue
		}
		for _, s := range tr.t.Ops.At(i).Types {
			if d, ok := dtypeOf(s); ok {
				out[top] = narrower(out[top], d)
			}
		}
	}
	return out
}

// opIdentity is an op by its name and its arguments, which the reader
// shares among the ops that repeat them (opArgs): ops alike in these have
// one groupKey.
type opIdentity struct {
	name string
	args *OpArgs
}

// maxSame is the most opIdentity entries Analyze keeps.
const maxSame = 1 << 16

func identity(o *Op) opIdentity { return opIdentity{o.Name, o.OpArgs} }

// groupKey identifies an op's row: name, shapes, types and the arguments
// that change its cost.
func groupKey(o *Op) string {
	return o.Name + "\x00" + shapes(o) + "\x00" + strings.Join(o.Types, ",") + "\x00" + strings.Join(o.Concrete, ",")
}

// shapes writes an op's tensor arguments: "[8,1,2048] [2048,2048]".
func shapes(o *Op) string {
	var b strings.Builder
	dims := func(d []int64) {
		b.WriteByte('[')
		for i, v := range d {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(v, 10))
		}
		b.WriteByte(']')
	}
	for _, in := range o.Inputs {
		if len(in.Dims) == 0 && len(in.List) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if len(in.List) > 0 {
			b.WriteByte('[')
			for i, d := range in.List {
				if i > 0 {
					b.WriteByte(',')
				}
				dims(d)
			}
			b.WriteByte(']')
			continue
		}
		dims(in.Dims)
	}
	return b.String()
}

// newRow starts an op's row with its model.
func newRow(c call) OpRow {
	r := OpRow{Name: c.op.Name, Shapes: shapes(c.op)}
	r.DType, _ = c.typ(0)
	m, err := model(c)
	var u unmodelled
	switch {
	case errors.As(err, &u):
		r.Unmodelled = string(u)
	case err != nil:
		r.Unmodelled = err.Error()
	case !sane(m):
		r.Unmodelled = "shapes out of range"
	default:
		for i := range m {
			if m[i].Out == "" {
				m[i].Out = m[i].DType // what Cost assumes; specs print it
			}
		}
		r.Model = m
		r.DType = m[0].DType
	}
	return r
}

// sane reports whether the ops' costs are finite, non-negative and exact
// in float64: a damaged trace can hold any dims.
func sane(ms []ops.Op) bool {
	for _, o := range ms {
		c := o.Cost()
		for _, v := range []float64{c.MatrixFLOPs, c.VectorFLOPs, c.Transcendentals, c.Bytes} {
			if v < 0 || v > 1<<53 || math.IsNaN(v) {
				return false
			}
		}
		if c.Bytes == 0 && c.FLOPs() == 0 {
			return false
		}
	}
	return true
}

// price sets a row against the roofline. A trace times kernels on the GPU,
// from their start, so the model's launch overhead (the CPU-to-GPU latency
// a CUDA-event timing includes) is taken off each expected kernel time.
func price(r *OpRow, m *roofline.Model, launch float64) {
	var slowest float64
	for _, o := range r.Model {
		p, err := m.Analyze(o)
		if err != nil {
			r.Unmodelled, r.Model = err.Error(), nil
			r.FLOPs, r.Bytes, r.LowerBound, r.Expected, r.Bound, r.Ceiling, r.CeilingFLOPs = 0, 0, 0, 0, "", "", 0
			return
		}
		n := float64(r.Calls)
		r.FLOPs += n * p.FLOPs
		r.Bytes += n * p.Bytes
		r.LowerBound += n * p.LowerBound
		r.Expected += n * max(p.Expected-launch, p.LowerBound)
		if p.Expected > slowest {
			slowest, r.Bound, r.Ceiling, r.CeilingFLOPs = p.Expected, p.ExpectedBound, p.PeakKey, p.ComputeCeiling
		}
	}
	if r.Measured > 0 && r.Modelled() {
		r.AchievedFLOPs = r.FLOPs / r.Measured
		r.AchievedBandwidth = r.Bytes / r.Measured
		r.Efficiency = r.Expected / r.Measured
		r.Saved = math.Max(0, r.Measured-r.Expected)
	}
}

// top returns the indices of the costliest ops and of those losing most
// time against their expected speed.
func top(rows []OpRow) (byTime, byLost []int) {
	for i := range rows {
		if i < topN {
			byTime = append(byTime, i)
		}
		if rows[i].Saved > 0 {
			byLost = append(byLost, i)
		}
	}
	slices.SortStableFunc(byLost, func(x, y int) int { return cmp.Compare(rows[y].Saved, rows[x].Saved) })
	if len(byLost) > topN {
		byLost = byLost[:topN]
	}
	return byTime, byLost
}

// Balance is |OpTime + UnattributedTime − KernelTime| / KernelTime: the
// share of kernel time lost or counted twice (0 when every kernel is
// counted once).
func (s Summary) Balance() float64 {
	if s.KernelTime == 0 {
		return 0
	}
	return math.Abs(s.OpTime+s.UnattributedTime-s.KernelTime) / s.KernelTime
}
