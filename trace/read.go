// Package trace reads the Chrome traces that torch.profiler exports
// (export_chrome_trace, .json or .json.gz) and sets every top-level aten op,
// measured by the GPU time of the kernels it launched, against the device's
// roofline; and every kernel's launch against its theoretical occupancy.
//
// The reader streams the JSON one event at a time, so memory stays within a
// small multiple of the file size. Ops are joined to kernels by the
// "External id" both carry, else through the "correlation" a kernel shares
// with its cuda_runtime launch, whose thread and time place it inside an op.
// The fields read are those PyTorch 1.8 to 2.x write (cpu_op "Input Dims",
// "Input type", "Concrete Inputs"; kernel "grid", "block", "registers per
// thread", "shared memory"); others are skipped.
package trace

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/rows"
)

// Trace is what the reader keeps of a torch.profiler trace. Times are in
// microseconds, as the trace has them.
type Trace struct {
	Devices []DeviceProps
	// Distributed is the trace's distributedInfo (nil when absent): the
	// rank that wrote it, in a multi-GPU run.
	Distributed *Distributed
	// RecordShapes is the trace's record_shapes flag (false when absent).
	RecordShapes bool
	// Ops, Kernels, Launches and Transfers are kept in the blocks they were
	// read into: joining millions of records into one slice copied them
	// all again (with the collector's write barriers) for nothing.
	Ops       rows.Blocks[Op]
	Kernels   rows.Blocks[Kernel]
	Launches  rows.Blocks[Launch]
	Transfers rows.Blocks[Transfer]
	// Events counts the events read, of every kind.
	Events int
}

// DeviceProps is one entry of the trace's deviceProperties.
type DeviceProps struct {
	ID           int    `json:"id"`
	Name         string `json:"name"`
	ComputeMajor int    `json:"computeMajor"`
	ComputeMinor int    `json:"computeMinor"`
	NumSMs       int    `json:"numSms"`
}

// Distributed is what a trace of one rank of a torch.distributed run says
// of it.
type Distributed struct {
	Backend   string
	Rank      int
	WorldSize int
}

// Comm is the collective a record_param_comms op (and, in recent PyTorch,
// the NCCL kernel it launched) describes: its "Collective name", message
// sizes in elements, element type and process group.
type Comm struct {
	Name      string
	InElems   int64
	OutElems  int64
	DType     string
	GroupSize int
	Group     string
}

// Op is a cpu_op event: an aten operator (or any recorded function) on a
// CPU thread.
type Op struct {
	Name       string
	Thread     string
	Start, Dur float64
	ExternalID int64
	// OpArgs are the op's arguments as recorded, shared by the ops that
	// repeat them (a step repeats a few hundred over millions of ops): a
	// pointer, never nil, where three slices took 72 bytes an op.
	*OpArgs
	// Comm is the collective the op records (nil for any other op).
	Comm *Comm
}

// OpArgs are an op's "Input Dims", "Input type" and "Concrete Inputs",
// one entry per argument. Nothing changes them once read.
type OpArgs struct {
	Inputs   []Input
	Types    []string
	Concrete []string
}

// End is when the op returns.
func (o *Op) End() float64 { return o.Start + o.Dur }

// Input is the shape of one argument: Dims for a tensor (empty for a
// scalar or an absent tensor), List for a tensor list whose shapes were
// recorded.
type Input struct {
	Dims []int64
	List [][]int64
}

// inputDims is "Input Dims": per argument [d0, d1, ...], or for a tensor
// list [[...], [...]]. It is parsed by hand: it is most of a cpu_op's
// bytes, and encoding/json would scan each argument three times.
type inputDims []Input

func (in *inputDims) UnmarshalJSON(b []byte) error {
	p := dimParser{b: b}
	v, err := p.list(0)
	if err != nil {
		return err
	}
	out := make(inputDims, 0, len(v.items))
	for _, arg := range v.items {
		if !arg.isList {
			return errDims
		}
		var x Input
		for _, d := range arg.items {
			if d.items != nil || d.isList {
				x.List = append(x.List, d.ints())
			} else {
				x.Dims = append(x.Dims, d.n)
			}
		}
		out = append(out, x)
	}
	*in = out
	return nil
}

// dimNode is a number or a list in "Input Dims".
type dimNode struct {
	n      int64
	isList bool
	items  []dimNode
}

func (d dimNode) ints() []int64 {
	out := make([]int64, 0, len(d.items))
	for _, x := range d.items {
		out = append(out, x.n)
	}
	return out
}

// dimParser reads nested lists of integers; anything else is an error
// (the value was already validated as JSON by the decoder).
type dimParser struct {
	b []byte
	i int
}

var errDims = errors.New(`"Input Dims" is not a list of integer lists`)

func (p *dimParser) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\n' || p.b[p.i] == '\r' || p.b[p.i] == '\t') {
		p.i++
	}
}

// list reads "[" items "]" at nesting depth; three levels at most
// (arguments, tensor lists, dims).
func (p *dimParser) list(depth int) (dimNode, error) {
	p.space()
	if depth > 2 || p.i >= len(p.b) || p.b[p.i] != '[' {
		return dimNode{}, errDims
	}
	p.i++
	n := dimNode{isList: true}
	for first := true; ; first = false {
		p.space()
		if p.i < len(p.b) && p.b[p.i] == ']' && first {
			p.i++
			return n, nil
		}
		var item dimNode
		if p.i < len(p.b) && p.b[p.i] == '[' {
			x, err := p.list(depth + 1)
			if err != nil {
				return n, err
			}
			item = x
		} else {
			start := p.i
			for p.i < len(p.b) && (p.b[p.i] == '-' || p.b[p.i] >= '0' && p.b[p.i] <= '9') {
				p.i++
			}
			v, err := strconv.ParseInt(string(p.b[start:p.i]), 10, 64)
			if err != nil {
				return n, errDims
			}
			item.n = v
		}
		n.items = append(n.items, item)
		p.space()
		if p.i >= len(p.b) {
			return n, errDims
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return n, nil
		default:
			return n, errDims
		}
	}
}

// Kernel is a kernel event on the GPU.
type Kernel struct {
	Name        string
	Start, Dur  float64
	ExternalID  int64
	Correlation int64
	Device      int
	Stream      int
	Grid, Block [3]int
	Registers   int
	// SharedMemory is the block's shared memory, static and dynamic, bytes.
	SharedMemory int
	// EstOccupancy is the trace's "est. achieved occupancy %" (nil when
	// absent).
	EstOccupancy *float64
	// Comm is the collective of an NCCL kernel, where the trace copied
	// it onto the kernel (nil otherwise).
	Comm *Comm
}

// Launch is a cuda_runtime or cuda_driver event (cudaLaunchKernel,
// cudaGraphLaunch, cudaMemcpyAsync ...).
type Launch struct {
	Name        string
	Thread      string
	Start       float64
	ExternalID  int64
	Correlation int64
}

// Transfer is a gpu_memcpy or gpu_memset event.
type Transfer struct {
	// Kind is "memcpy" or "memset"; Name the trace's ("Memcpy HtoD
	// (Pageable -> Device)").
	Kind        string
	Name        string
	Start, Dur  float64
	Bytes       int64
	Stream      int
	ExternalID  int64
	Correlation int64
}

// event is one trace event as read; fields of other event kinds are left
// zero. Its strings are the scanner's, each kept once (names).
type event struct {
	Ph, Cat, Name string
	Tid           flexID
	Ts, Dur       float64
	Args          args
}

// comm is the collective the args describe, or nil: an event is a
// collective's when it names one or gives a message size.
func (a *args) comm() *Comm {
	if a.Collective == "" && a.InElems == nil && a.OutElems == nil {
		return nil
	}
	c := &Comm{Name: a.Collective, DType: a.DType, GroupSize: a.GroupSize, Group: string(a.Group)}
	if a.InElems != nil {
		c.InElems = *a.InElems
	}
	if a.OutElems != nil {
		c.OutElems = *a.OutElems
	}
	return c
}

// args are the event's args gpucalc reads.
type args struct {
	ExternalID  int64
	Correlation int64
	Dims        inputDims
	Types       []string
	Concrete    []string
	Grid        [3]int
	Block       [3]int
	Registers   int
	Smem        int
	Stream      int
	Device      int
	Occupancy   *float64
	Bytes       int64
	// The collective's fields (record_param_comms, NCCL kernels).
	Collective string
	InElems    *int64
	OutElems   *int64
	DType      string
	GroupSize  int
	Group      flexID
}

// flexID is a pid or tid: a number (its text), or a string ("Spans").
type flexID string

// Errors a caller may test for.
var (
	// ErrNotTorch is a Chrome trace written by another tool.
	ErrNotTorch = errors.New("not a torch.profiler trace")
	// ErrNoShapes is a trace recorded without record_shapes=True.
	ErrNoShapes = errors.New("the trace has no input shapes")
)

// Read reads a torch.profiler Chrome trace, gzipped or not (gzip is told by
// its magic bytes). It stops at MaxBytes of JSON, MaxEvents events kept, an
// event over 16 MiB or a name over rows.MaxName; it refuses a negative
// duration, and kernels from GPUs that differ.
func Read(r io.Reader) (*Trace, error) {
	return readBounded(r, bounds{bytes: MaxBytes, events: MaxEvents, event: maxEventBytes})
}

func readBounded(r io.Reader, lim bounds) (*Trace, error) {
	t, _, err := readParts(r, lim)
	return t, err
}

// readParts is readBounded, which also says how many parts were read
// ahead on other cores and taken whole.
func readParts(r io.Reader, lim bounds) (*Trace, int, error) {
	in, gzipped, err := rows.Decompress(r)
	if err != nil {
		return nil, 0, err
	}
	sc := newScanner(rows.Limit(in, lim.bytes), lim)
	if size := lim.partSize(); size > 0 {
		sc = newFedScanner(rows.Limit(in, lim.bytes), lim, size)
		defer sc.feed.close()
	}
	t, err := sc.decode()
	if e := sc.limitError(err); e != nil {
		return nil, sc.adopted, e
	}
	if err != nil && gzipped && t == nil {
		return nil, sc.adopted, fmt.Errorf("the gzip holds no JSON trace: %w", err)
	}
	if err != nil {
		return nil, sc.adopted, err
	}
	return t, sc.adopted, t.check()
}

// building holds the events kept while the trace is read.
type building struct {
	ops       rows.Blocks[Op]
	kernels   rows.Blocks[Kernel]
	launches  rows.Blocks[Launch]
	transfers rows.Blocks[Transfer]
	// opArgs holds each distinct OpArgs made, by the arrays it holds (which
	// the scanner shares), up to maxShapes of them.
	shared map[opArgsKey]*OpArgs
	args   slab[OpArgs] // where OpArgs are made
}

// opArgsKey is an OpArgs by its arrays: their first elements, lengths and
// whether they are nil.
type opArgsKey struct {
	inputs                       *Input
	types, concrete              *string
	nIn, nTypes, nConcrete       int
	nilIn, nilTypes, nilConcrete bool
}

// opArgs returns the OpArgs of the arguments a, one for each distinct set
// of the arrays the scanner shares (Types is never nil).
func (b *building) opArgs(a *args) *OpArgs {
	x := OpArgs{Inputs: []Input(a.Dims), Types: a.Types, Concrete: a.Concrete}
	if x.Types == nil {
		x.Types = []string{}
	}
	k := opArgsKey{nIn: len(x.Inputs), nTypes: len(x.Types), nConcrete: len(x.Concrete),
		nilIn: x.Inputs == nil, nilTypes: a.Types == nil, nilConcrete: x.Concrete == nil}
	if len(x.Inputs) > 0 {
		k.inputs = &x.Inputs[0]
	}
	if len(x.Types) > 0 {
		k.types = &x.Types[0]
	}
	if len(x.Concrete) > 0 {
		k.concrete = &x.Concrete[0]
	}
	if p, ok := b.shared[k]; ok {
		return p
	}
	p := &b.args.take(1)[0]
	*p = x
	if b.shared == nil {
		b.shared = map[opArgsKey]*OpArgs{}
	}
	if len(b.shared) < maxShapes {
		b.shared[k] = p
	}
	return p
}

// done moves what was kept into t.
func (b *building) done(t *Trace) {
	t.Ops, t.Kernels, t.Launches, t.Transfers = b.ops, b.kernels, b.launches, b.transfers
}

// kept is how many events b keeps.
func (b *building) kept() int {
	return b.ops.Len() + b.kernels.Len() + b.launches.Len() + b.transfers.Len()
}

// add keeps what the analysis needs of one event; it refuses one that
// cannot be real (a negative duration, an overlong name) and one past
// MaxEvents.
func (b *building) add(e *event, maxEvents int) error {
	if e.Ph != "X" {
		return nil
	}
	a := &e.Args
	// PyTorch 1.8 and 1.9 named the categories Operator, Kernel, Runtime,
	// Memcpy and Memset.
	cat := strings.ToLower(e.Cat)
	switch cat {
	case "cpu_op", "operator", "kernel", "cuda_runtime", "cuda_driver", "runtime", "gpu_memcpy", "gpu_memset", "memcpy", "memset":
	default:
		return nil
	}
	if len(e.Name) > rows.MaxName {
		return fmt.Errorf("a name of %d bytes, over the %s names may have (is this a torch.profiler trace?)", len(e.Name), rows.Size(rows.MaxName))
	}
	if e.Dur < 0 || math.IsNaN(e.Dur) || math.IsInf(e.Dur, 0) {
		return fmt.Errorf("%s %s lasts %g µs: a duration cannot be negative (was the trace edited, or merged from clocks that disagree?)", cat, rows.Quote(e.Name), e.Dur)
	}
	if a.Bytes < 0 {
		return fmt.Errorf("%s %s moves %d bytes: a size cannot be negative (was the trace edited?)", cat, rows.Quote(e.Name), a.Bytes)
	}
	if b.kept() >= maxEvents {
		return fmt.Errorf("more than %d ops, kernels, runtime calls and copies (the most gpucalc keeps); %s", maxEvents, fewerSteps)
	}
	switch cat {
	case "cpu_op", "operator":
		b.ops.Add(Op{
			Name: e.Name, Thread: string(e.Tid), Start: e.Ts, Dur: e.Dur,
			ExternalID: a.ExternalID, OpArgs: b.opArgs(a), Comm: a.comm(),
		})
	case "kernel":
		b.kernels.Add(Kernel{
			Name: e.Name, Start: e.Ts, Dur: e.Dur, ExternalID: a.ExternalID, Correlation: a.Correlation,
			Device: a.Device, Stream: a.Stream, Grid: a.Grid, Block: a.Block,
			Registers: a.Registers, SharedMemory: a.Smem, EstOccupancy: a.Occupancy, Comm: a.comm(),
		})
	case "cuda_runtime", "cuda_driver", "runtime":
		b.launches.Add(Launch{
			Name: e.Name, Thread: string(e.Tid), Start: e.Ts, ExternalID: a.ExternalID, Correlation: a.Correlation,
		})
	default:
		b.transfers.Add(Transfer{
			Kind: strings.TrimPrefix(cat, "gpu_"), Name: e.Name, Start: e.Ts, Dur: e.Dur, Bytes: a.Bytes,
			Stream: a.Stream, ExternalID: a.ExternalID, Correlation: a.Correlation,
		})
	}
	return nil
}

// check rejects traces the analysis cannot use, saying why.
func (t *Trace) check() error {
	if t.Ops.Len() == 0 && t.Kernels.Len() == 0 {
		return fmt.Errorf("%w: no cpu_op or kernel events among its %d events; export one with torch.profiler.profile(activities=[CPU, CUDA], record_shapes=True) and prof.export_chrome_trace(\"trace.json\")", ErrNotTorch, t.Events)
	}
	if t.Kernels.Len() == 0 {
		return fmt.Errorf("the trace has no GPU kernels: profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]")
	}
	if err := t.oneGPU(); err != nil {
		return err
	}
	if !t.hasShapes() {
		return fmt.Errorf("%w (recorded without record_shapes=True): without them no op's FLOPs or bytes can be set against the roofline, only kernel times and occupancy; profile with torch.profiler.profile(..., record_shapes=True)", ErrNoShapes)
	}
	return nil
}

// oneGPU refuses kernels that ran on GPUs that differ (by name, compute
// capability or SM count in deviceProperties): the analysis prices one GPU,
// as ncu's reader does. Kernels on several GPUs of one kind are kept.
func (t *Trace) oneGPU() error {
	// Two entries for one device ID that differ: traces of two machines
	// merged, whose kernels cannot be told apart.
	for i, p := range t.Devices {
		for _, q := range t.Devices[:i] {
			if p.ID == q.ID && !sameGPU(p, q) {
				return fmt.Errorf("deviceProperties gives device %d twice, as different GPUs (%s and %s): is this two traces merged? gpucalc prices one GPU: give each GPU's trace on its own", p.ID, gpuName(q), gpuName(p))
			}
		}
	}
	first, seen := -1, map[int]bool{}
	var want DeviceProps
	for i := range t.Kernels.Len() {
		id := t.Kernels.At(i).Device
		if seen[id] {
			continue
		}
		seen[id] = true
		p, ok := t.props(id)
		switch {
		case !ok:
		case first < 0:
			first, want = id, p
		case !sameGPU(p, want):
			return fmt.Errorf("the kernels ran on different GPUs (device %d: %s, device %d: %s), and gpucalc prices one: profile one GPU, or export each rank's trace on its own", first, gpuName(want), id, gpuName(p))
		}
	}
	return nil
}

func sameGPU(p, q DeviceProps) bool {
	return p.Name == q.Name && p.ComputeMajor == q.ComputeMajor && p.ComputeMinor == q.ComputeMinor && p.NumSMs == q.NumSMs
}

func gpuName(p DeviceProps) string {
	return fmt.Sprintf("%s, cc %d.%d, %d SMs", rows.Quote(p.Name), p.ComputeMajor, p.ComputeMinor, p.NumSMs)
}

// hasShapes reports whether any aten op recorded its input dims.
func (t *Trace) hasShapes() bool {
	for i := range t.Ops.Len() {
		if len(t.Ops.At(i).Inputs) > 0 {
			return true
		}
	}
	return t.RecordShapes && t.Ops.Len() == 0
}

var errTruncated = errors.New("the trace is truncated: the JSON ends before it is complete (was the export interrupted, or the file cut?)")

// interner shares one copy of each repeated string (kernel and op names,
// type names), which keeps memory near the number of distinct names.
type interner map[string]string

func (in interner) get(s string) string {
	if v, ok := in[s]; ok {
		return v
	}
	in[s] = s
	return s
}
