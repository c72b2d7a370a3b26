package roofline

import (
	"fmt"
	"math"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ops"
)

// Link is the memory level of an op that moves data between GPUs.
const Link devices.Level = "link"

// Defaults for links without a measured all-reduce curve, from the two-H200
// NCCL 2.28.9 fit in the device catalog (devices/data/measured/h200-sxm.yaml:
// 9.62 us, 263.7 GB/s bus bandwidth over NVLink 4 at 450 GB/s per direction,
// calls back to back in a CUDA graph): NCCL's fixed cost per call, and the
// share of the link's per-direction rate its bus bandwidth reaches.
// TestAllReduceDefaults keeps them equal to the catalog's figures.
const (
	allReduceLatency  = 9.62e-6
	allReduceLinkFrac = 263.7 / 450.0
)

// Collectives is NCCL's cost of a collective over the device's peer link:
// Latency + bus bytes / BusBandwidth, bus bytes as nccl-tests counts them
// (2(n−1)/n of the message for an all-reduce, (n−1)/n for an all-gather or
// a reduce-scatter). Measured is set where the catalog has the device's
// own all-reduce curve; otherwise Note says which defaults stand in.
type Collectives struct {
	Link         devices.Link
	Latency      float64
	BusBandwidth float64
	Measured     bool
	Note         string
}

// Time is the curve's time for a collective that moves busBytes per rank.
func (c Collectives) Time(busBytes float64) float64 {
	if c.BusBandwidth <= 0 {
		return 0
	}
	return c.Latency + busBytes/c.BusBandwidth
}

// Collectives is the device's collective curve: its measured all-reduce
// where the catalog has one (NVLink H100/H200), else the NCCL defaults
// above applied to the link the catalog gives (NVLink, or PCIe through
// the host link for parts without NVLink).
func (m *Model) Collectives() Collectives {
	link := m.dev.Peer()
	if me := m.dev.Measured; me != nil && me.AllReduceBusBandwidth > 0 {
		return Collectives{Link: link, Latency: me.AllReduceLatency, BusBandwidth: me.AllReduceBusBandwidth, Measured: true}
	}
	return Collectives{Link: link, Latency: allReduceLatency, BusBandwidth: link.BytesPerSecond * allReduceLinkFrac,
		Note: fmt.Sprintf("no measured all-reduce on %s: NCCL's 2-H200 latency and %.0f%% of the %s rate assumed", m.dev.Name, 100*allReduceLinkFrac, link.Type)}
}

// allReduce prices an all-reduce (or an all-to-all: its bus bytes are the
// (n−1)/n of each rank's message sent to the others) over the device's
// peer link: the lower bound sends the bus bytes at the link's datasheet
// rate per direction; the expected time is the Collectives curve.
func (m *Model) allReduce(op ops.Op, c ops.Cost) Point {
	curve := m.Collectives()
	link := curve.Link
	p := Point{
		Op: op, Device: m.dev.Name, Count: 1, Kernels: 1,
		FLOPs: c.FLOPs(), Bytes: c.Bytes, AI: c.AI(),
		PeakKey: "link", MemoryLevel: Link, MemoryCeiling: link.BytesPerSecond,
		Bound: MemoryBound, ExpectedBound: "link",
	}
	if op.Ranks <= 1 {
		return p
	}
	if curve.Note != "" {
		p.Notes = append(p.Notes, curve.Note)
	}
	if link.BytesPerSecond > 0 {
		p.LowerBound = c.Bytes / link.BytesPerSecond
		if f := m.eff.AllReduce; f != nil && f.NVLSFraction > 0 && op.Kind == ops.AllReduce {
			// Switches that reduce in the network (NVLS) leave each
			// GPU its message to send and receive once, fewer bytes
			// than a ring's bus bytes from three ranks up.
			p.LowerBound = math.Min(c.Bytes, message(c.Bytes, float64(op.Ranks))) / link.BytesPerSecond
		}
		p.Attainable = p.AI * link.BytesPerSecond
	}
	p.Expected = curve.Time(c.Bytes)
	latency := curve.Latency
	if f := m.eff.AllReduce; op.Impl == ops.ImplNCCL && f != nil && link.BytesPerSecond > 0 {
		fit := *f
		if op.Kind != ops.AllReduce {
			fit.NVLSFraction = 0 // the switches reduce; they do not exchange
		}
		p.Expected, latency = allReduceFit(fit, c.Bytes, float64(op.Ranks), link.BytesPerSecond)
		p.Notes = append(p.Notes[:0], fmt.Sprintf("NCCL's all-reduce on %s as fitted on aiconfigurator's nccl tables (ring LL or Simple, or NVLS where the switches reduce: the fastest)", f.Link))
	}
	if latency > p.Expected/2 {
		p.ExpectedBound = "latency"
	}
	return p
}

// allReduceFit is the time of an all-reduce that moves busBytes per rank
// among ranks GPUs on a link of linkRate bytes per second per direction,
// by the link kind's fit (devices.AllReduceFit): the fastest of ring LL,
// ring Simple and, where the switches reduce, NVLS; and its latency part.
func allReduceFit(f devices.AllReduceFit, busBytes, ranks, linkRate float64) (t, latency float64) {
	rate := f.LinkFraction * linkRate / math.Pow(ranks/2, f.RankExponent)
	steps := 2 * (ranks - 1) * f.Hop
	t, latency = f.LLLatency+steps+busBytes/(rate/2), f.LLLatency+steps
	if simple := f.SimpleLatency + math.Pow(math.Sqrt(steps)+math.Sqrt(busBytes/rate), 2); simple < t {
		t, latency = simple, f.SimpleLatency+steps
	}
	if f.NVLSFraction > 0 {
		if nvls := f.NVLSLatency + message(busBytes, ranks)/(f.NVLSFraction*linkRate); nvls < t {
			t, latency = nvls, f.NVLSLatency
		}
	}
	return t, latency
}

// message is an all-reduce's message from its bus bytes, 2(n−1)/n of it.
func message(busBytes, ranks float64) float64 { return busBytes * ranks / (2 * (ranks - 1)) }
