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
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
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
	Ops          []Op
	Kernels      []Kernel
	Launches     []Launch
	Transfers    []Transfer
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
	// Inputs, Types and Concrete are the op's "Input Dims", "Input type"
	// and "Concrete Inputs", one entry per argument.
	Inputs   []Input
	Types    []string
	Concrete []string
	// Comm is the collective the op records (nil for any other op).
	Comm *Comm
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

// event is one trace event as decoded; fields of other event kinds are
// left zero.
type event struct {
	Ph   string    `json:"ph"`
	Cat  string    `json:"cat"`
	Name string    `json:"name"`
	Tid  flexID    `json:"tid"`
	Ts   float64   `json:"ts"`
	Dur  float64   `json:"dur"`
	Args eventArgs `json:"args"`
}

// eventArgs are the args of the events the reader keeps.
type eventArgs struct {
	ExternalID  int64     `json:"External id"`
	Correlation int64     `json:"correlation"`
	Dims        inputDims `json:"Input Dims"`
	Types       []string  `json:"Input type"`
	Concrete    []string  `json:"Concrete Inputs"`
	Grid        []int     `json:"grid"`
	Block       []int     `json:"block"`
	Registers   int       `json:"registers per thread"`
	Smem        int       `json:"shared memory"`
	Stream      int       `json:"stream"`
	Device      int       `json:"device"`
	Occupancy   *float64  `json:"est. achieved occupancy %"`
	Bytes       int64     `json:"bytes"`
	// The collective's fields (record_param_comms, NCCL kernels).
	Collective string `json:"Collective name"`
	InElems    *int64 `json:"In msg nelems"`
	OutElems   *int64 `json:"Out msg nelems"`
	DType      string `json:"dtype"`
	GroupSize  int    `json:"Group size"`
	Group      flexID `json:"Process Group Name"`
}

// comm is the collective the args describe, or nil: an event is a
// collective's when it names one or gives a message size.
func (a *eventArgs) comm(in interner) *Comm {
	if a.Collective == "" && a.InElems == nil && a.OutElems == nil {
		return nil
	}
	c := &Comm{Name: in.get(a.Collective), DType: in.get(a.DType), GroupSize: a.GroupSize, Group: in.get(string(a.Group))}
	if a.InElems != nil {
		c.InElems = *a.InElems
	}
	if a.OutElems != nil {
		c.OutElems = *a.OutElems
	}
	return c
}

// flexID is a pid or tid: a number, or a string ("Spans").
type flexID string

func (f *flexID) UnmarshalJSON(b []byte) error {
	var s string
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexID(s)
		return nil
	}
	*f = flexID(b)
	return nil
}

// Errors a caller may test for.
var (
	// ErrNotTorch is a Chrome trace written by another tool.
	ErrNotTorch = errors.New("not a torch.profiler trace")
	// ErrNoShapes is a trace recorded without record_shapes=True.
	ErrNoShapes = errors.New("the trace has no input shapes")
)

// Read reads a torch.profiler Chrome trace, gzipped or not (gzip is told by
// its magic bytes).
func Read(r io.Reader) (*Trace, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic, _ := br.Peek(2)
	var in io.Reader = br
	gzipped := len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b
	if gzipped {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("reading the gzip: %w", err)
		}
		defer zr.Close()
		in = zr
	}
	t, err := decode(json.NewDecoder(in))
	if err != nil && gzipped && t == nil {
		return nil, fmt.Errorf("the gzip holds no JSON trace: %w", err)
	}
	if err != nil {
		return nil, err
	}
	return t, t.check()
}

// decode walks the top-level object. It returns a nil Trace when the input
// is not JSON at all.
func decode(dec *json.Decoder) (*Trace, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonErr(err)
	}
	switch tok {
	case json.Delim('{'):
	case json.Delim('['):
		return &Trace{}, fmt.Errorf("%w: a Chrome trace in array form, as other tools write; torch.profiler writes an object with traceEvents (prof.export_chrome_trace(\"trace.json\"))", ErrNotTorch)
	default:
		return nil, fmt.Errorf("a trace is a JSON object, found %v", tok)
	}
	t := &Trace{}
	in := interner{}
	sawEvents := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return t, jsonErr(err)
		}
		key, _ := tok.(string)
		switch key {
		case "traceEvents":
			sawEvents = true
			if err := t.events(dec, in); err != nil {
				return t, err
			}
		case "distributedInfo":
			// Kept only where it gives a rank; any other shape is skipped.
			var d struct {
				Backend   any  `json:"backend"`
				Rank      *int `json:"rank"`
				WorldSize int  `json:"world_size"`
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return t, jsonErr(err)
			}
			var te *json.UnmarshalTypeError
			if err := json.Unmarshal(raw, &d); (err == nil || errors.As(err, &te)) && d.Rank != nil {
				backend, _ := d.Backend.(string)
				t.Distributed = &Distributed{Backend: backend, Rank: *d.Rank, WorldSize: d.WorldSize}
			}
		case "deviceProperties":
			if err := dec.Decode(&t.Devices); err != nil {
				return t, fmt.Errorf("deviceProperties: %w", jsonErr(err))
			}
		case "record_shapes":
			var v any
			if err := dec.Decode(&v); err != nil {
				return t, jsonErr(err)
			}
			t.RecordShapes = v == true || v == 1.0 || v == "1" || v == "true"
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return t, jsonErr(err)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return t, jsonErr(err)
	}
	if !sawEvents {
		return t, fmt.Errorf("%w: no traceEvents", ErrNotTorch)
	}
	return t, nil
}

// events reads the traceEvents array one event at a time.
func (t *Trace) events(dec *json.Decoder, in interner) error {
	tok, err := dec.Token()
	if err != nil {
		return jsonErr(err)
	}
	if tok != json.Delim('[') {
		return fmt.Errorf("%w: traceEvents is not a list", ErrNotTorch)
	}
	for dec.More() {
		var e event
		if err := dec.Decode(&e); err != nil {
			// A field of an unexpected type (or odd "Input Dims")
			// spoils only that field: Decode has read the whole event.
			var te *json.UnmarshalTypeError
			switch err = jsonErr(err); {
			case errors.Is(err, errTruncated):
				return fmt.Errorf("the trace is truncated after %d complete events: was the export interrupted, or the file cut?", t.Events)
			case !errors.As(err, &te) && !errors.Is(err, errDims):
				return fmt.Errorf("event %d: %w", t.Events+1, err)
			}
		}
		t.Events++
		t.add(&e, in)
	}
	_, err = dec.Token()
	return jsonErr(err)
}

// add keeps what the analysis needs of one event.
func (t *Trace) add(e *event, in interner) {
	if e.Ph != "X" {
		return
	}
	a := &e.Args
	// PyTorch 1.8 and 1.9 named the categories Operator, Kernel, Runtime,
	// Memcpy and Memset.
	switch cat := strings.ToLower(e.Cat); cat {
	case "cpu_op", "operator":
		types := make([]string, len(a.Types))
		for i, s := range a.Types {
			types[i] = in.get(s)
		}
		t.Ops = append(t.Ops, Op{
			Name: in.get(e.Name), Thread: in.get(string(e.Tid)), Start: e.Ts, Dur: e.Dur,
			ExternalID: a.ExternalID, Inputs: []Input(a.Dims), Types: types, Concrete: a.Concrete, Comm: a.comm(in),
		})
	case "kernel":
		t.Kernels = append(t.Kernels, Kernel{
			Name: in.get(e.Name), Start: e.Ts, Dur: e.Dur, ExternalID: a.ExternalID, Correlation: a.Correlation,
			Device: a.Device, Stream: a.Stream, Grid: dim3(a.Grid), Block: dim3(a.Block),
			Registers: a.Registers, SharedMemory: a.Smem, EstOccupancy: a.Occupancy, Comm: a.comm(in),
		})
	case "cuda_runtime", "cuda_driver", "runtime":
		t.Launches = append(t.Launches, Launch{
			Name: in.get(e.Name), Thread: in.get(string(e.Tid)), Start: e.Ts, ExternalID: a.ExternalID, Correlation: a.Correlation,
		})
	case "gpu_memcpy", "gpu_memset", "memcpy", "memset":
		t.Transfers = append(t.Transfers, Transfer{
			Kind: strings.TrimPrefix(cat, "gpu_"), Name: in.get(e.Name), Start: e.Ts, Dur: e.Dur, Bytes: a.Bytes,
			Stream: a.Stream, ExternalID: a.ExternalID, Correlation: a.Correlation,
		})
	}
}

func dim3(v []int) [3]int {
	d := [3]int{1, 1, 1}
	copy(d[:], v)
	return d
}

// check rejects traces the analysis cannot use, saying why.
func (t *Trace) check() error {
	if len(t.Ops) == 0 && len(t.Kernels) == 0 {
		return fmt.Errorf("%w: no cpu_op or kernel events among its %d events; export one with torch.profiler.profile(activities=[CPU, CUDA], record_shapes=True) and prof.export_chrome_trace(\"trace.json\")", ErrNotTorch, t.Events)
	}
	if len(t.Kernels) == 0 {
		return fmt.Errorf("the trace has no GPU kernels: profile with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]")
	}
	if !t.hasShapes() {
		return fmt.Errorf("%w (recorded without record_shapes=True): without them no op's FLOPs or bytes can be set against the roofline, only kernel times and occupancy; profile with torch.profiler.profile(..., record_shapes=True)", ErrNoShapes)
	}
	return nil
}

// hasShapes reports whether any aten op recorded its input dims.
func (t *Trace) hasShapes() bool {
	for i := range t.Ops {
		if len(t.Ops[i].Inputs) > 0 {
			return true
		}
	}
	return t.RecordShapes && len(t.Ops) == 0
}

var errTruncated = errors.New("the trace is truncated: the JSON ends before it is complete (was the export interrupted, or the file cut?)")

// jsonErr makes a decoder error one line a user can act on: a truncated
// file says so.
func jsonErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errTruncated
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("not valid JSON at byte %s: %s", strconv.FormatInt(se.Offset, 10), se.Error())
	}
	return err
}

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
