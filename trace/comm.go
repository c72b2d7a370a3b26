package trace

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gpucalc/gpucalc/roofline"
)

// The NCCL kernels of a rank's trace, each tied to the collective that
// launched it.

// Collective kinds, as NCCL names its functions (the kernel names carry
// them: ncclDevKernel_AllGather_RING_LL, ncclKernel_ReduceScatter_...).
const (
	AllReduce     = "all_reduce"
	AllGather     = "all_gather"
	ReduceScatter = "reduce_scatter"
	Broadcast     = "broadcast"
	Reduce        = "reduce"
	SendRecv      = "send_recv"
	AllToAll      = "all_to_all"
)

// ncclFuncs maps NCCL's function names to the kinds above.
var ncclFuncs = map[string]string{
	"AllReduce": AllReduce, "AllGather": AllGather, "ReduceScatter": ReduceScatter, "Broadcast": Broadcast,
	"Reduce": Reduce, "SendRecv": SendRecv, "Send": SendRecv, "Recv": SendRecv, "AllToAll": AllToAll,
}

// commKind tells an NCCL kernel by its name and returns its collective's
// kind ("" for an NCCL kernel whose function is not known, such as a
// version's new one). ok is false for any other kernel.
func commKind(name string) (kind string, ok bool) {
	i := strings.Index(name, "ncclDevKernel_")
	n := len("ncclDevKernel_")
	if i < 0 {
		i, n = strings.Index(name, "ncclKernel_"), len("ncclKernel_")
	}
	if i < 0 {
		return "", strings.HasPrefix(name, "nccl")
	}
	fn := name[i+n:]
	if j := strings.IndexAny(fn, "_(<"); j >= 0 {
		fn = fn[:j]
	}
	return ncclFuncs[fn], true
}

// kindOfName is the kind of a record_param_comms "Collective name"
// (allreduce, _allgather_base, allgather_into_tensor_coalesced,
// _reduce_scatter_base, reduce_scatter_tensor_coalesced, all_to_all,
// broadcast, send, recv), "" when it names none of them.
func kindOfName(name string) string {
	n := strings.ReplaceAll(strings.ToLower(name), "_", "")
	switch {
	case strings.Contains(n, "allreduce"):
		return AllReduce
	case strings.Contains(n, "allgather"):
		return AllGather
	case strings.Contains(n, "reducescatter"):
		return ReduceScatter
	case strings.Contains(n, "alltoall"):
		return AllToAll
	case strings.Contains(n, "broadcast"):
		return Broadcast
	case n == "reduce":
		return Reduce
	case n == "send" || n == "recv":
		return SendRecv
	}
	return ""
}

// BusFactor is nccl-tests' bus bandwidth over algorithm bandwidth for a
// collective of kind among n ranks: what each rank's link carries per byte
// of the message (PERFORMANCE.md of nccl-tests). 2(n−1)/n for an
// all-reduce, (n−1)/n for an all-gather, a reduce-scatter or an
// all-to-all, 1 for the rest.
func BusFactor(kind string, n int) float64 {
	if n < 1 {
		return 1
	}
	share := float64(n-1) / float64(n)
	switch kind {
	case AllReduce:
		return 2 * share
	case AllGather, ReduceScatter, AllToAll:
		return share
	}
	return 1
}

// elemBytes are the sizes of the element types a record_param_comms
// "dtype" names (c10::ScalarType names).
var elemBytes = map[string]float64{
	"Double": 8, "Long": 8, "ComplexFloat": 8, "ComplexDouble": 16,
	"Float": 4, "Int": 4, "UInt32": 4,
	"BFloat16": 2, "Half": 2, "Short": 2, "UInt16": 2,
	"Byte": 1, "Char": 1, "Bool": 1, "Float8_e4m3fn": 1, "Float8_e5m2": 1, "Float8_e4m3fnuz": 1, "Float8_e5m2fnuz": 1,
}

// messageBytes is a collective's size as nccl-tests counts it: the whole
// tensor, so the output of an all-gather and the input of a
// reduce-scatter (the larger of the two), in bytes; 0 when the element
// type is unknown.
func messageBytes(c *Comm) float64 {
	return float64(max(c.InElems, c.OutElems)) * elemBytes[c.DType]
}

// commOf finds the collective an NCCL kernel ran: the kernel's own
// fields where the trace copied them onto it, else the record_param_comms
// op around its launch (the op its External id names, or the op that
// spans its cudaLaunchKernel on the launching thread, and up through the
// ops that enclose it). nil when neither says.
func (j *joiner) commOf(k *Kernel) *Comm {
	if k.Comm != nil && (k.Comm.InElems > 0 || k.Comm.OutElems > 0) {
		return k.Comm
	}
	t := j.tr.t
	var starts []int
	if op, ok := j.tr.byExtID.get(k.ExternalID); ok && k.ExternalID != 0 {
		starts = append(starts, op)
	}
	if li, ok := j.launch.get(k.Correlation); ok {
		l := t.Launches.At(li)
		if op := j.tr.enclosing(l.Thread, l.Start); op >= 0 {
			starts = append(starts, op)
		}
	}
	for _, op := range starts {
		for p := op; p >= 0; p = j.tr.parent[p] {
			if c := t.Ops.At(p).Comm; c != nil {
				return c
			}
		}
	}
	return k.Comm
}

// collectiveRows groups the ranks' NCCL kernels by kind, message size,
// group size and element type, and sets each group against the link
// curve. It returns how many kernels had no message size.
func collectiveRows(ks []commKernel, nRanks int, curve roofline.Collectives) ([]CollectiveRow, int) {
	type key struct {
		kind, name, dtype string
		bytes             float64
		group             int
	}
	idx := map[key]int{}
	var rows []CollectiveRow
	perRank := map[int]map[int][]float64{} // row -> rank -> durations in order
	missing := 0
	for _, ck := range ks {
		k := key{kind: kindLabel(ck.kind), group: nRanks}
		why := "no record_param_comms op around the launch, nor sizes on the kernel"
		if c := ck.comm; c != nil {
			k.name, k.dtype, k.bytes = c.Name, c.DType, messageBytes(c)
			if c.GroupSize > 0 {
				k.group = c.GroupSize
			}
			why = ""
			switch {
			case c.InElems == 0 && c.OutElems == 0:
				why = "the collective's record carries no message size"
			case k.bytes == 0:
				why = fmt.Sprintf("element type %q not known", c.DType)
			}
		}
		if why != "" {
			missing++
		}
		i, ok := idx[k]
		if !ok {
			i = len(rows)
			idx[k] = i
			rows = append(rows, CollectiveRow{Kind: k.kind, Name: k.name, Kernel: ck.k.Name, DType: k.dtype, Bytes: k.bytes, GroupSize: k.group, Missing: why})
			perRank[i] = map[int][]float64{}
		}
		r := &rows[i]
		r.Kernels++
		r.Time += ck.k.Dur * usec
		perRank[i][ck.rank] = append(perRank[i][ck.rank], ck.k.Dur*usec)
	}
	for i := range rows {
		r := &rows[i]
		r.Mean = r.Time / float64(r.Kernels)
		r.Transfer = r.Mean
		calls, even := -1, len(perRank[i]) == nRanks
		for _, d := range perRank[i] {
			r.Calls = max(r.Calls, len(d))
			if calls >= 0 && len(d) != calls {
				even = false
			}
			calls = len(d)
		}
		if even && calls > 0 {
			// Kernels in launch order per rank (the trace lists them in
			// time order): the nth call of each rank is one collective.
			var sum float64
			for c := 0; c < calls; c++ {
				shortest := math.Inf(1)
				for _, d := range perRank[i] {
					shortest = min(shortest, d[c])
				}
				sum += shortest
			}
			r.Transfer = sum / float64(calls)
		}
		if r.Bytes > 0 && r.Transfer > 0 {
			f := BusFactor(r.Kind, r.GroupSize)
			r.AlgBandwidth = r.Bytes / r.Transfer
			r.BusBandwidth = r.AlgBandwidth * f
			if r.Expected = curve.Time(r.Bytes * f); r.Expected > 0 {
				r.CurveBus = r.Bytes * f / r.Expected
				// A message whose curve time is mostly the curve's latency
				// (the all-reduce's, more steps than a small broadcast
				// takes) measures latency, not bandwidth: no efficiency
				// (a 128-byte broadcast read 271%).
				if r.LatencyBound = curve.Latency >= r.Bytes*f/curve.BusBandwidth; !r.LatencyBound {
					r.Efficiency = r.Expected / r.Transfer
				}
			}
		}
	}
	slices.SortStableFunc(rows, func(a, b CollectiveRow) int { return cmp.Compare(b.Time, a.Time) })
	return rows, missing
}

// IsComm reports whether a kernel, by its name, is NCCL's: its time is
// the link's (and the waiting for other ranks), not the SMs'.
func IsComm(name string) bool {
	_, ok := commKind(name)
	return ok
}
