package ncu

import (
	"bytes"
	"encoding/json"
	"iter"
	"slices"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/rows"
)

// Launches are an export's kernels as read, each held as a record without
// pointers: names, lists of missing metrics and the work by precision are
// kept once in tables and referred to by index. A million launches take a
// few hundred bytes each, which the collector never scans; a Kernel or an
// Analysis is made from a record when it is visited.
type Launches struct {
	recs rows.Blocks[record]
	// texts are the names (of kernels, devices) and occupancy errors, each
	// once; texts[0] is "". short is a kernel name's short form, set for
	// the texts that name kernels.
	texts []text
	index map[string]uint32
	// lists are the lists of missing and implausible figures, each once;
	// lists[0] is nil.
	lists     [][]string
	listIndex map[string]uint32
	// works are the kernels' work by precision, a run per kernel (in
	// blocks: a slice grown to millions copies itself into fresh memory at
	// each doubling); keys the precisions, by index.
	works rows.Blocks[work]
	keys  []Work
	// devices are the texts that name a kernel's device, in order of first
	// appearance.
	devices []uint32
}

// text is a name, and the short form of a kernel's name read from an
// export (ShortName, made once per name).
type text struct{ s, short string }

// work is a Work with its precision by index.
type work struct {
	key   uint8
	flops float64
}

// record is a Kernel (and, once analysed, gpucalc's occupancy of it) by
// value and index: see Launches.
type record struct {
	id                   int
	name, full, device   uint32 // texts
	cc                   devices.CC
	block, grid          Dim3
	duration             float64
	launch               Launch
	hasLaunch            bool
	has                  uint8 // hasTheoretical, hasAchieved
	levels               uint8 // bit i: traffic at levels[i]
	nWork                uint8
	work                 uint32 // the kernel's first work in works
	traffic              [3]float64
	theoretical          float64
	achieved             float64
	blocksPerSM          int
	limiters             occupancy.Limiter
	by                   [5]int
	missing, implausible uint32 // lists
	occ                  occRecord
}

const (
	hasTheoretical = 1 << iota
	hasAchieved
)

// levels are the memory levels a record's traffic is at, in the order
// traffic reads them.
var levels = [3]Level{DRAM, L2, L1}

// occRecord is gpucalc's Occupancy of a record, Error by index in texts.
type occRecord struct {
	theoretical float64
	blocks      int
	limiters    occupancy.Limiter
	match       bool
	by          occupancy.PerLimit
	err         uint32
}

func newLaunches() *Launches {
	return &Launches{texts: []text{{}}, index: map[string]uint32{"": 0}, lists: [][]string{nil}, listIndex: map[string]uint32{"": 0}}
}

// Len is how many kernels were read.
func (l *Launches) Len() int { return l.recs.Len() }

// text returns the index of s in texts, adding a copy of it (the row it
// came from is not kept).
func (l *Launches) text(s string) uint32 {
	if i, ok := l.index[s]; ok {
		return i
	}
	s = strings.Clone(s)
	i := uint32(len(l.texts))
	l.texts = append(l.texts, text{s: s})
	l.index[s] = i
	return i
}

// shortName is ShortName(full), made once per name.
func (l *Launches) shortName(full string) string {
	i := l.text(full)
	if l.texts[i].short == "" {
		l.texts[i].short = ShortName(l.texts[i].s)
	}
	return l.texts[i].short
}

// list returns the index of xs in lists, adding it when new.
func (l *Launches) list(xs []string) uint32 {
	if len(xs) == 0 {
		return 0
	}
	key := strings.Join(xs, "\x00")
	if i, ok := l.listIndex[key]; ok {
		return i
	}
	i := uint32(len(l.lists))
	l.lists = append(l.lists, slices.Clip(slices.Clone(xs)))
	l.listIndex[key] = i
	return i
}

// add keeps k as a record.
func (l *Launches) add(k *Kernel) {
	r := record{id: k.ID, name: l.text(k.Name), full: l.text(k.FullName), device: l.text(k.Device), cc: k.CC, block: k.Block, grid: k.Grid,
		duration: k.Duration, missing: l.list(k.Missing), implausible: l.list(k.Implausible)}
	if !slices.Contains(l.devices, r.device) {
		l.devices = append(l.devices, r.device)
	}
	if k.Launch != nil {
		r.launch, r.hasLaunch = *k.Launch, true
	}
	r.work, r.nWork = uint32(l.works.Len()), uint8(len(k.Work))
	for _, w := range k.Work {
		key := slices.IndexFunc(l.keys, func(x Work) bool { return x.DType == w.DType && x.Path == w.Path })
		if key < 0 {
			key = len(l.keys)
			l.keys = append(l.keys, Work{DType: w.DType, Path: w.Path})
		}
		l.works.Add(work{key: uint8(key), flops: w.FLOPs})
	}
	for _, t := range k.Traffic {
		i := slices.Index(levels[:], t.Level)
		r.levels |= 1 << i
		r.traffic[i] = t.Bytes
	}
	o := k.Occupancy
	if o.Theoretical != nil {
		r.has, r.theoretical = r.has|hasTheoretical, *o.Theoretical
	}
	if o.Achieved != nil {
		r.has, r.achieved = r.has|hasAchieved, *o.Achieved
	}
	r.blocksPerSM, r.limiters, r.by = o.BlocksPerSM, o.Limiters, o.By
	l.recs.Add(r)
}

// buffers are what a Kernel made from a record points into: reused from
// one record to the next, or each kernel's own (nil buffers).
type buffers struct {
	launch      Launch
	theoretical float64
	achieved    float64
	work        []Work
	traffic     []Traffic
	compute     []Rate
	memory      []LevelRate
	reuse       bool
}

// kernel makes the Kernel of r in k.
func (l *Launches) kernel(r *record, k *Kernel, b *buffers) {
	*k = Kernel{ID: r.id, Name: l.texts[r.name].s, FullName: l.texts[r.full].s, Device: l.texts[r.device].s, CC: r.cc, Block: r.block, Grid: r.grid,
		Duration: r.duration, Missing: l.lists[r.missing], Implausible: l.lists[r.implausible]}
	if !b.reuse {
		*b = buffers{}
	}
	if r.hasLaunch {
		b.launch = r.launch
		k.Launch = &b.launch
		if !b.reuse {
			k.Launch = &Launch{}
			*k.Launch = r.launch
		}
	}
	if r.nWork > 0 {
		k.Work = b.work[:0]
		for i := range int(r.nWork) {
			w := l.works.At(int(r.work) + i)
			x := l.keys[w.key]
			x.FLOPs = w.flops
			k.Work = append(k.Work, x)
		}
		b.work = k.Work
	}
	k.Traffic = b.traffic[:0]
	if k.Traffic == nil {
		k.Traffic = make([]Traffic, 0, 3)
	}
	for i, lv := range levels {
		if r.levels&(1<<i) != 0 {
			k.Traffic = append(k.Traffic, Traffic{Level: lv, Bytes: r.traffic[i]})
		}
	}
	b.traffic = k.Traffic
	o := &k.Occupancy
	if r.has&hasTheoretical != 0 {
		b.theoretical = r.theoretical
		o.Theoretical = &b.theoretical
	}
	if r.has&hasAchieved != 0 {
		b.achieved = r.achieved
		o.Achieved = &b.achieved
	}
	if !b.reuse { // each its own
		if o.Theoretical != nil {
			o.Theoretical = new(float64)
			*o.Theoretical = r.theoretical
		}
		if o.Achieved != nil {
			o.Achieved = new(float64)
			*o.Achieved = r.achieved
		}
	}
	o.BlocksPerSM, o.Limiters, o.By = r.blocksPerSM, r.limiters, r.by
}

// Kernels returns the kernels read, in order, each its own.
func (l *Launches) Kernels() []Kernel {
	out := make([]Kernel, 0, l.Len())
	for r := range l.recs.Each {
		var k Kernel
		l.kernel(&r, &k, &buffers{})
		out = append(out, k)
	}
	return out
}

// DeviceNames lists the distinct device names of the kernels (see
// DeviceNames).
func (l *Launches) DeviceNames() []string {
	var out []string
	for _, i := range l.devices {
		if n := strings.TrimSpace(l.texts[i].s); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Device is the one GPU the kernels were profiled on (see ExportDevice).
func (l *Launches) Device(c *devices.Catalog) (devices.Device, error) {
	return exportDevice(c, l.DeviceNames())
}

// Analyses are Launches set against a device: each kernel's occupancy
// computed once, its Analysis made from its record as it is visited.
type Analyses struct {
	l *Launches
	c *ceilings
}

// Analyze sets each kernel against device d (Analyze). The Analyses share
// l's records.
func (l *Launches) Analyze(d devices.Device) *Analyses {
	c := newCeilings(d)
	var b buffers
	b.reuse = true
	var k Kernel
	for r := range l.recs.Pointers {
		l.kernel(r, &k, &b)
		o := theoretical(k, d)
		r.occ = occRecord{theoretical: o.Theoretical, blocks: o.BlocksPerSM, limiters: o.Limiters, match: o.Match, by: o.By, err: l.text(o.Error)}
	}
	for _, w := range l.keys {
		c.peak(w) // looked up now: the Analyses only read c, from any goroutine
	}
	return &Analyses{l: l, c: c}
}

// AnalyzeAll sets kernels ks against device d, as Analyze does each.
func AnalyzeAll(ks []Kernel, d devices.Device) *Analyses {
	l := newLaunches()
	for i := range ks {
		l.add(&ks[i])
	}
	return l.Analyze(d)
}

// Len is how many kernels there are.
func (as *Analyses) Len() int {
	if as == nil || as.l == nil {
		return 0
	}
	return as.l.Len()
}

// All yields each kernel's Analysis in order: one value, made anew for
// each kernel, valid until the next.
func (as *Analyses) All() iter.Seq[*Analysis] {
	return func(yield func(*Analysis) bool) {
		if as == nil || as.l == nil {
			return
		}
		var a Analysis
		b := buffers{reuse: true}
		for r := range as.l.recs.Pointers {
			as.analysis(r, &a, &b)
			if !yield(&a) {
				return
			}
		}
	}
}

// Cursor returns a function that makes the Analysis of kernel i in one
// value, valid until the next call. Each goroutine needs its own.
func (as *Analyses) Cursor() func(i int) *Analysis {
	var a Analysis
	b := buffers{reuse: true}
	return func(i int) *Analysis {
		as.analysis(as.l.recs.At(i), &a, &b)
		return &a
	}
}

// Slice returns every Analysis, each its own.
func (as *Analyses) Slice() []Analysis {
	out := make([]Analysis, 0, as.Len())
	if as.Len() == 0 {
		return out
	}
	for r := range as.l.recs.Pointers {
		var a Analysis
		as.analysis(r, &a, &buffers{})
		out = append(out, a)
	}
	return out
}

// analysis makes r's Analysis in a.
func (as *Analyses) analysis(r *record, a *Analysis, b *buffers) {
	as.l.kernel(r, &a.Kernel, b)
	o := r.occ
	a.Occupancy = Occupancy{Theoretical: o.theoretical, BlocksPerSM: o.blocks, Limiters: o.limiters, By: o.by, Error: as.l.texts[o.err].s, Match: o.match}
	rates(a, as.c, b)
}

// MarshalJSON writes every Analysis, as a list of them would be written
// (HTML's characters as they are: the encoder of the whole escapes them
// if it does).
func (as *Analyses) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(as.Slice())
	return b.Bytes(), err
}
