package trace

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpucalc/gpucalc/review"
	"github.com/gpucalc/gpucalc/roofline"
)

// A multi-GPU step, one torch.profiler trace per rank: each rank's GPU time
// split into compute, communication (NCCL kernels), their overlap and idle
// time, the collectives with their sizes and bandwidth against the
// device's link, and the rank that holds the step back.

// RankTrace is one rank's trace and where it came from.
type RankTrace struct {
	// Name is the file (or "standard input").
	Name  string
	Trace *Trace
}

// Ranks is a multi-GPU step. Times are in seconds, sizes in bytes, rates
// in bytes per second.
type Ranks struct {
	Device string `json:"device"`
	Ranks  []Rank `json:"ranks"`
	// Collectives group the NCCL kernels by kind, message size, group
	// size and element type, over every rank.
	Collectives []CollectiveRow `json:"collectives"`
	// Link is the curve the collectives are set against.
	Link     LinkCurve        `json:"link"`
	Slowest  Slowest          `json:"slowest"`
	Findings []review.Finding `json:"findings"`
	// MedianWindow is the ranks' median GPU window, against which the
	// findings' savings are shares (0 for no ranks).
	MedianWindow float64 `json:"median_gpu_window_seconds"`
	// Notes say what the traces lacked (collective sizes, rank numbers).
	Notes []string `json:"notes"`
}

// Rank is one rank's GPU time. Window = Compute + Exposed + Idle exactly:
// Compute and Communication are unions of intervals over every stream,
// Overlap their intersection.
type Rank struct {
	Rank int    `json:"rank"`
	File string `json:"file"`
	// Steps counts the trace's ProfilerStep#N spans (0 when it has none).
	Steps int `json:"steps"`
	// Window is the first kernel's start to the last one's end.
	Window float64 `json:"gpu_window_seconds"`
	// Compute is the time any kernel other than NCCL's runs on some
	// stream; Communication the time an NCCL kernel does. Copies and sets
	// are left out, as the trace's kernel view does (the single-trace
	// analysis lists them).
	Compute       float64 `json:"compute_seconds"`
	Communication float64 `json:"communication_seconds"`
	// Overlap is the time both run; Exposed the communication not
	// overlapped by compute; Idle the time nothing runs.
	Overlap float64 `json:"overlap_seconds"`
	Exposed float64 `json:"exposed_communication_seconds"`
	Idle    float64 `json:"idle_seconds"`
	// CommKernelTime is the sum of the NCCL kernels' durations (more than
	// Communication where they overlap each other on several streams).
	CommKernels    int     `json:"communication_kernels"`
	CommKernelTime float64 `json:"communication_kernel_seconds"`
	ComputeKernels int     `json:"compute_kernels"`
	// ExposedBy is each collective kind's NCCL time not overlapped by
	// compute (kernels of two kinds running at once count for both).
	ExposedBy map[string]float64 `json:"exposed_by_collective_seconds"`
}

// Own is the rank's GPU time outside communication: what it does before it
// can join a collective.
func (r Rank) Own() float64 { return r.Compute + r.Idle }

// CollectiveRow is the NCCL kernels of one collective kind, message size,
// group size and element type, over every rank.
type CollectiveRow struct {
	Kind string `json:"kind"`
	// Name is the collective as PyTorch recorded it (allreduce,
	// _allgather_base); Kernel the NCCL kernel's name.
	Name   string `json:"name"`
	Kernel string `json:"kernel"`
	DType  string `json:"dtype"`
	// Bytes is the message as nccl-tests counts it (the whole tensor:
	// the output of an all-gather, the input of a reduce-scatter); 0
	// when the trace does not give it.
	Bytes     float64 `json:"message_bytes"`
	GroupSize int     `json:"group_size"`
	// Calls is per rank (the most any rank made); Kernels over all ranks.
	Calls   int `json:"calls"`
	Kernels int `json:"kernels"`
	// Time is the kernels' summed duration over all ranks; Mean per
	// kernel.
	Time float64 `json:"time_seconds"`
	Mean float64 `json:"mean_seconds"`
	// Transfer is, per call, the shortest of the ranks' kernels for it,
	// averaged: the rank that arrives last waits least, so its kernel
	// time is closest to the transfer itself (the mean when the ranks
	// made different numbers of calls).
	Transfer float64 `json:"transfer_seconds"`
	// AlgBandwidth = Bytes / Transfer; BusBandwidth = AlgBandwidth ×
	// BusFactor.
	AlgBandwidth float64 `json:"algorithm_bytes_per_second"`
	BusBandwidth float64 `json:"bus_bytes_per_second"`
	// Expected is the link curve's time for the message, CurveBus its bus
	// bandwidth at that size; Efficiency = Expected / Transfer, except for
	// a latency-bound message (LatencyBound: the curve's latency is at
	// least its transfer time at the curve's bandwidth), which has none.
	Expected     float64 `json:"expected_seconds"`
	CurveBus     float64 `json:"curve_bus_bytes_per_second"`
	Efficiency   float64 `json:"efficiency"`
	LatencyBound bool    `json:"latency_bound"`
	// Missing says why the row has no size ("" when it has one).
	Missing string `json:"missing,omitempty"`
}

// LinkCurve is the device link's collective curve.
type LinkCurve struct {
	Type         string  `json:"type"`
	Bandwidth    float64 `json:"link_bytes_per_second"`
	Latency      float64 `json:"latency_seconds"`
	BusBandwidth float64 `json:"bus_bytes_per_second"`
	Measured     bool    `json:"measured"`
	Note         string  `json:"note,omitempty"`
}

// Slowest is the odd rank out, against a typical rank (Reference, the
// nearest the median). Collectives make every rank wait for the last to
// arrive, inside its NCCL kernels, so a slow rank shows in the others'
// communication time, and windows say little (each profile starts when its
// process does): ranks are compared by their time outside communication
// (compute + idle), and the odd one is the farthest from the median. It
// holds the step back when Own > 0; when Own < 0 it does less than the
// others and waits for them. The deltas are its times less the reference's;
// Window = Compute + Exposed + Idle, so they add up.
type Slowest struct {
	Rank      int     `json:"rank"`
	Reference int     `json:"reference_rank"`
	Window    float64 `json:"window_delta_seconds"`
	Compute   float64 `json:"compute_delta_seconds"`
	Exposed   float64 `json:"exposed_communication_delta_seconds"`
	Idle      float64 `json:"idle_delta_seconds"`
	// Own is the difference in time outside communication (Compute +
	// Idle).
	Own float64 `json:"own_delta_seconds"`
	// Because is compute or idle, whichever delta is larger ("" when
	// neither is positive).
	Because string `json:"because"`
}

// Thresholds of the multi-rank analysis.
const (
	// stragglerSpread is the spread of the ranks' time outside
	// communication, as a share of the median window, from which a
	// straggler is reported.
	stragglerSpread = 0.05
	// exposedShare is the share of a rank's window a collective kind's
	// exposed time must reach to be reported.
	exposedShare = 0.05
)

// AnalyzeRanks splits each rank's GPU time, ties its NCCL kernels to their
// collectives, and sets the collectives against m's device link. Ranks are
// numbered by the traces' distributedInfo, else in the order given.
func AnalyzeRanks(traces []RankTrace, m *roofline.Model) (Ranks, error) {
	if len(traces) == 0 {
		return Ranks{}, fmt.Errorf("no traces to analyse")
	}
	curve := m.Collectives()
	out := Ranks{Device: m.Device().Name, Ranks: []Rank{}, Collectives: []CollectiveRow{}, Findings: []review.Finding{}, Notes: []string{},
		Link: LinkCurve{Type: curve.Link.Type, Bandwidth: curve.Link.BytesPerSecond, Latency: curve.Latency, BusBandwidth: curve.BusBandwidth,
			Measured: curve.Measured, Note: curve.Note}}
	numbers, err := rankNumbers(traces)
	if err != nil {
		return out, err
	}
	if numbers == nil {
		out.Notes = append(out.Notes, "the traces carry no distributedInfo: ranks are numbered in the order the files were given")
	} else if world := worldSize(traces); world > len(traces) {
		out.Notes = append(out.Notes, fmt.Sprintf("%d of the run's %d ranks: the slowest rank is the slowest of these", len(traces), world))
	}
	var kernels []commKernel
	for i, rt := range traces {
		rank := i
		if numbers != nil {
			rank = numbers[i]
		}
		r, ks := analyzeRank(rt, rank)
		out.Ranks = append(out.Ranks, r)
		kernels = append(kernels, ks...)
	}
	slices.SortStableFunc(out.Ranks, func(a, b Rank) int { return cmp.Compare(a.Rank, b.Rank) })
	var missing int
	out.Collectives, missing = collectiveRows(kernels, len(traces), curve)
	if missing > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d NCCL kernels have no message size: neither the kernel nor a record_param_comms op around its launch carries \"In msg nelems\" and \"dtype\" (PyTorch 2.1 or later records them)", missing))
	}
	out.Slowest = slowest(out.Ranks)
	out.MedianWindow = medianWindow(out.Ranks)
	out.Findings = rankFindings(out)
	return out, nil
}

// rankNumbers checks that the traces are one run's ranks and returns
// their numbers from distributedInfo, nil when no trace carries it. One
// run is at least two traces, all with distributedInfo or none, of one
// world size, with distinct ranks from 0 to the world size less one, on
// one GPU model: traces of other runs or GPUs mixed in would be priced
// on the first one's GPU, renumber the ranks or merge two steps.
func rankNumbers(traces []RankTrace) ([]int, error) {
	if len(traces) < 2 {
		what := "one trace"
		if d := traces[0].Trace.Distributed; d != nil && d.WorldSize > 1 {
			what = fmt.Sprintf("one trace, rank %d of %d,", d.Rank, d.WorldSize)
		}
		return nil, fmt.Errorf("%s is not a multi-GPU step: give every rank's trace of the run, or analyse %s alone as a single trace", what, traces[0].Name)
	}
	var first *RankTrace
	gpu := ""
	for i := range traces {
		rt := &traces[i]
		name := rt.Trace.DeviceName()
		if name == "" {
			continue
		}
		if gpu == "" {
			gpu, first = name, rt
		} else if name != gpu {
			return nil, fmt.Errorf("%s ran on %s and %s on %s: give the traces of one run, whose ranks share one GPU model", first.Name, gpu, rt.Name, name)
		}
	}
	with := slices.IndexFunc(traces, func(rt RankTrace) bool { return rt.Trace.Distributed != nil })
	if with < 0 {
		return nil, nil
	}
	if without := slices.IndexFunc(traces, func(rt RankTrace) bool { return rt.Trace.Distributed == nil }); without >= 0 {
		return nil, fmt.Errorf("%s has no distributedInfo while %s is rank %d: give only the traces of one multi-GPU run, one per rank", traces[without].Name, traces[with].Name, traces[with].Trace.Distributed.Rank)
	}
	out := make([]int, len(traces))
	seen := map[int]string{}
	// The world size where a trace gives one (0 where it does not); the
	// number of traces stands for it where none does.
	world, sized := 0, ""
	for _, rt := range traces {
		n := rt.Trace.Distributed.WorldSize
		if n == 0 {
			continue
		}
		if world != 0 && n != world {
			return nil, fmt.Errorf("%s is of a world of %d ranks and %s of %d: give the traces of one run", sized, world, rt.Name, n)
		}
		world, sized = n, rt.Name
	}
	if world <= 0 {
		world = len(traces)
	}
	for i, rt := range traces {
		d := rt.Trace.Distributed
		if d.Rank < 0 || d.Rank >= world {
			return nil, fmt.Errorf("%s is rank %d of %d (distributedInfo): a rank is 0 to the world size less one", rt.Name, d.Rank, world)
		}
		if prev, dup := seen[d.Rank]; dup {
			return nil, fmt.Errorf("%s and %s are both rank %d (distributedInfo): give one trace per rank, the files of one run", prev, rt.Name, d.Rank)
		}
		seen[d.Rank] = rt.Name
		out[i] = d.Rank
	}
	return out, nil
}

// worldSize is the run's world size where a trace gives it, else 0.
func worldSize(traces []RankTrace) int {
	for _, rt := range traces {
		if d := rt.Trace.Distributed; d != nil && d.WorldSize > 0 {
			return d.WorldSize
		}
	}
	return 0
}

// span is an interval of GPU time, in microseconds as the trace has them.
type span struct{ s, e float64 }

// commKernel is an NCCL kernel with its collective.
type commKernel struct {
	rank int
	k    *Kernel
	kind string
	comm *Comm
}

// analyzeRank measures one rank's compute, communication, overlap and idle
// time, and returns its NCCL kernels tied to their collectives.
func analyzeRank(rt RankTrace, rank int) (Rank, []commKernel) {
	t := rt.Trace
	r := Rank{Rank: rank, File: rt.Name, ExposedBy: map[string]float64{}}
	var compute, comm []span
	var ks []commKernel
	j := newJoiner(t)
	for i := range t.Kernels.Len() {
		k := t.Kernels.At(i)
		kind, isComm := commKind(k.Name)
		if !isComm {
			compute = append(compute, span{k.Start, k.Start + k.Dur})
			r.ComputeKernels++
			continue
		}
		comm = append(comm, span{k.Start, k.Start + k.Dur})
		r.CommKernels++
		r.CommKernelTime += k.Dur * usec
		c := j.commOf(k)
		if kind == "" && c != nil {
			kind = kindOfName(c.Name)
		}
		ks = append(ks, commKernel{rank: rank, k: k, kind: kind, comm: c})
	}
	slices.SortStableFunc(ks, func(a, b commKernel) int { return cmp.Compare(a.k.Start, b.k.Start) })
	for i := range t.Ops.Len() {
		if strings.HasPrefix(t.Ops.At(i).Name, "ProfilerStep#") {
			r.Steps++
		}
	}
	all := union(append(slices.Clone(compute), comm...))
	compute, comm = union(compute), union(comm)
	if len(all) > 0 {
		r.Window = (all[len(all)-1].e - all[0].s) * usec
	}
	r.Compute, r.Communication = length(compute)*usec, length(comm)*usec
	r.Overlap = intersect(compute, comm) * usec
	r.Exposed = r.Communication - r.Overlap
	r.Idle = r.Window - length(all)*usec
	for _, ck := range ks {
		s := []span{{ck.k.Start, ck.k.Start + ck.k.Dur}}
		r.ExposedBy[kindLabel(ck.kind)] += (ck.k.Dur - intersect(s, compute)) * usec
	}
	return r, ks
}

// kindLabel names a kind for output ("other" for an NCCL kernel of a
// function not known).
func kindLabel(kind string) string {
	if kind == "" {
		return "other"
	}
	return kind
}

// union merges intervals into disjoint ones, in order.
func union(sp []span) []span {
	slices.SortFunc(sp, func(a, b span) int { return cmp.Compare(a.s, b.s) })
	var out []span
	for _, x := range sp {
		if n := len(out); n > 0 && x.s <= out[n-1].e {
			out[n-1].e = max(out[n-1].e, x.e)
			continue
		}
		out = append(out, x)
	}
	return out
}

func length(sp []span) float64 {
	var n float64
	for _, x := range sp {
		n += x.e - x.s
	}
	return n
}

// intersect is the length of the intersection of two sets of disjoint,
// ordered intervals.
func intersect(a, b []span) float64 {
	var n float64
	for i, j := 0, 0; i < len(a) && j < len(b); {
		if lo, hi := max(a[i].s, b[j].s), min(a[i].e, b[j].e); hi > lo {
			n += hi - lo
		}
		if a[i].e < b[j].e {
			i++
		} else {
			j++
		}
	}
	return n
}

// slowest finds the odd rank out: the rank whose time outside
// communication lies farthest from the ranks' median (a tie goes to the
// slower), set against the rank nearest the median, and says which of its
// times makes the difference. Usually it is slower than the others, and they
// wait for it; where it is faster (Own < 0), it waits for them. Taking the
// extremes instead blamed one of three ranks within 0.6 ms of each other
// when the fourth was the odd one.
func slowest(ranks []Rank) Slowest {
	if len(ranks) == 0 {
		return Slowest{}
	}
	own := make([]float64, len(ranks))
	for i, r := range ranks {
		own[i] = r.Own()
	}
	slices.Sort(own)
	n := len(own)
	med := (own[(n-1)/2] + own[n/2]) / 2
	dist := func(r Rank) float64 { return math.Abs(r.Own() - med) }
	hi := ranks[0]
	for _, r := range ranks[1:] {
		if d := dist(r); d > dist(hi) || d == dist(hi) && r.Own() > hi.Own() {
			hi = r
		}
	}
	lo := hi
	for _, r := range ranks {
		if r.Rank != hi.Rank && (lo.Rank == hi.Rank || dist(r) < dist(lo)) {
			lo = r
		}
	}
	s := Slowest{Rank: hi.Rank, Reference: lo.Rank, Window: hi.Window - lo.Window, Compute: hi.Compute - lo.Compute,
		Exposed: hi.Exposed - lo.Exposed, Idle: hi.Idle - lo.Idle, Own: hi.Own() - lo.Own()}
	// The larger of the compute and idle deltas, in the direction of Own.
	c, i := s.Compute, s.Idle
	if s.Own < 0 {
		c, i = -c, -i
	}
	switch {
	case c <= 0 && i <= 0:
	case c >= i:
		s.Because = "compute"
	default:
		s.Because = "idle"
	}
	return s
}

// medianWindow is the ranks' median GPU window (0 for none): what the
// findings' savings are shares of.
func medianWindow(ranks []Rank) float64 {
	w := make([]float64, len(ranks))
	for i, r := range ranks {
		w[i] = r.Window
	}
	slices.Sort(w)
	if n := len(w); n%2 == 1 {
		return w[n/2]
	} else if n > 0 {
		return (w[n/2-1] + w[n/2]) / 2
	}
	return 0
}
