package ops

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
)

// MoE is a mixture-of-experts layer on one GPU (see MoEShape): the router,
// the routed tokens' grouped GEMMs (gate and up, down) over the experts they
// hit, the activation and the weighted top-k combine. The all-to-all that
// brings tokens to their experts under expert parallelism is a collective,
// priced apart.
const MoE Kind = "moe"

// Routing distributions of a MoE op (Op.Dist).
const (
	// DistBalanced spreads the tokens' top-k choices evenly over the
	// experts (each of T·k/E tokens), as aiconfigurator's balanced router
	// logits do.
	DistBalanced = "balanced"
	// DistUniform draws each token's k experts uniformly at random (a
	// trained router's average): E·(1−(1−k/E)^T) experts are hit.
	DistUniform = "uniform"
	// DistPowerLaw gives the experts power-law loads of exponent Op.Alpha
	// (real routers' imbalance, as aiconfigurator samples it).
	DistPowerLaw = "power_law"
)

// setDist applies dist=balanced or dist=power_law:ALPHA.
func (o *Op) setDist(val string) error {
	v := strings.ToLower(val)
	switch v {
	case DistBalanced:
		o.Dist, o.Alpha = "", 0
		return nil
	case DistUniform:
		o.Dist, o.Alpha = DistUniform, 0
		return nil
	}
	name, alpha, ok := strings.Cut(v, ":")
	if name != DistPowerLaw || !ok {
		return fmt.Errorf("dist=%s: expected balanced, uniform or power_law:ALPHA (e.g. power_law:1.2)", val)
	}
	a, err := strconv.ParseFloat(alpha, 64)
	if err != nil || a <= 0 || a > 10 || math.IsNaN(a) {
		return fmt.Errorf("dist=%s: the power law's exponent must be a number above 0 and at most 10", val)
	}
	o.Dist, o.Alpha = DistPowerLaw, a
	return nil
}

// LocalExperts is the experts on one GPU: Experts/EP.
func (o Op) LocalExperts() int64 { return o.Experts / max(o.EP, 1) }

// LocalInter is an expert's width on one GPU: Inter/TP.
func (o Op) LocalInter() int64 { return o.Inter / max(o.TP, 1) }

// gateUp is the gate/up GEMM's output width on one GPU: twice the local
// width when gated (gate and up in one weight, as fused MoE kernels store
// them), once otherwise.
func (o Op) gateUp() int64 {
	if o.Ungated {
		return o.LocalInter()
	}
	return 2 * o.LocalInter()
}

// Loads is the routed tokens each expert on the first GPU (rank 0 of the
// expert-parallel group) receives, busiest first. Balanced routing sends
// the T·k choices round the experts, so min(E, T·k) experts are hit, each by
// T·k/hit tokens (the busiest by the ceiling); uniform routing hits
// E·(1−(1−k/E)^T) of them, as evenly. A power law of exponent α
// gives expert i of E the load of the power law's (i+½)/E quantile on [1,
// 0.8·T] ([0.01, 2] when T·k ≤ E), scaled to T·k in all and capped at T (a
// token picks an expert once); the GPU measured holds the busiest expert and
// an even sample of the rest (aiconfigurator's collector moves the busiest
// expert's group to rank 0).
func (o Op) Loads() []float64 {
	t, k, e, local := float64(o.Tokens), float64(o.TopK), float64(o.Experts), o.LocalExperts()
	if o.Dist != DistPowerLaw {
		hit := math.Min(e, t*k)
		if o.Dist == DistUniform {
			hit = math.Max(1, math.Round(e*(1-math.Pow(1-k/e, t))))
		}
		per := t * k / hit
		n := int64(math.Max(1, math.Ceil(hit/float64(max(o.EP, 1)))))
		loads := make([]float64, min(n, local))
		for i := range loads {
			loads[i] = per
		}
		if len(loads) > 0 {
			loads[0] = math.Ceil(per)
		}
		return loads
	}
	lo, hi := 1.0, 0.8*t
	if t*k <= e {
		lo, hi = 0.01, 2
	}
	hi = math.Max(hi, lo*1.0001)
	a := o.Alpha
	q := func(u float64) float64 {
		if math.Abs(a-1) < 1e-9 {
			return lo * math.Pow(hi/lo, u)
		}
		return math.Pow((math.Pow(hi, 1-a)-math.Pow(lo, 1-a))*u+math.Pow(lo, 1-a), 1/(1-a))
	}
	all := make([]float64, o.Experts)
	sum := 0.0
	for i := range all {
		all[i] = q((float64(i) + 0.5) / e)
		sum += all[i]
	}
	for i := range all {
		all[i] = math.Min(t, all[i]/sum*t*k)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(all)))
	loads := []float64{all[0]}
	rest := all[1:]
	step := float64(len(rest)) / float64(max(local-1, 1))
	for j := int64(0); j < local-1 && len(rest) > 0; j++ {
		loads = append(loads, rest[min(int(float64(j)*step+step/2), len(rest)-1)])
	}
	out := loads[:0]
	for _, l := range loads {
		if l >= 0.5 { // an expert expected to get no token is not hit
			out = append(out, math.Round(l))
		}
	}
	if len(out) == 0 {
		out = append(out, 1)
	}
	return out
}

// LocalTokens is the tokens that reach this GPU's experts: all of them
// without expert parallelism; with it, those with at least one of their k
// choices among the GPU's experts (balanced: k/EP of them; otherwise each
// choice lands here with the share of the routed rows this GPU's experts
// take).
func (o Op) LocalTokens() float64 {
	t, k := float64(o.Tokens), float64(o.TopK)
	if o.EP <= 1 {
		return t
	}
	if o.Dist == "" { // balanced
		// A token's k choices are spread evenly over the experts, so
		// over the GPUs: each token reaches min(k, EP) of the EP GPUs.
		return t * math.Min(1, k/float64(o.EP))
	}
	routed := 0.0
	for _, l := range o.Loads() {
		routed += l
	}
	share := math.Min(1, routed/(t*k))
	return math.Min(t, math.Max(routed/k, t*(1-math.Pow(1-share, k))))
}

// moeCost is the layer's FLOPs and ideal bytes on one GPU, counting only
// what surely happens, so that a lower bound from them holds: the routed
// rows are at least this GPU's even share of the T·k choices (the busiest
// GPU's are more); the experts hit are those balanced or uniform routing
// hits (Loads), but under a power law, whose loads are one draw of a
// heavy tail, only the ceil(rows/T) that must be (no expert takes more
// than one row per token), each hit expert's weights read once; the
// router's logits, the tokens that reach this GPU and their combined
// output are read or written once. The activation and the top-k combine
// compute over every routed row.
func (o Op) moeCost(out float64) Cost {
	f := func(x int64) float64 { return float64(x) }
	in, w := o.ExpertSizes()
	act := devices.BF16.Size()
	t, h, gu, li := f(o.Tokens), f(o.Hidden), f(o.gateUp()), f(o.LocalInter())
	routed := t * f(o.TopK) / f(max(o.EP, 1))
	hit := f(int64(len(o.Loads())))
	if o.Dist == DistPowerLaw {
		hit = math.Min(f(o.LocalExperts()), math.Ceil(routed/t))
	}
	local := o.LocalTokens()
	var c Cost
	c.Bytes += t*f(o.Experts)*act + local*h*in + local*h*out
	c.MatrixFLOPs += 2*routed*h*gu + 2*routed*li*h
	c.Bytes += hit * (h*gu + li*h) * w
	c.VectorFLOPs += routed*li*(siluFLOPs+1) + 2*routed*h
	c.Transcendentals += routed * li
	return c
}

// MoEWorkingSet is the bytes a moe op's kernels are expected to touch
// (Cost's bytes are the fewest it surely moves): the weights of the experts
// Loads hits, the routed rows in and out of both GEMMs, and the tokens'
// input and combined output. Whether it fits in L2 decides where a warm
// replay reads from.
func (o Op) MoEWorkingSet() float64 {
	f := func(x int64) float64 { return float64(x) }
	in, w := o.ExpertSizes()
	act := devices.BF16.Size()
	loads := o.Loads()
	routed := 0.0
	for _, l := range loads {
		routed += l
	}
	h, gu, li := f(o.Hidden), f(o.gateUp()), f(o.LocalInter())
	local := o.LocalTokens()
	return f(int64(len(loads)))*(h*gu+li*h)*w + routed*(h*in+gu*act+li*in+h*act) + 2*local*h*act
}

// ExpertSizes is the size of an element the experts' GEMMs read and of a
// stored weight element: the scheme's under quant=, else the op's types
// (DType, and Weight where set).
func (o Op) ExpertSizes() (in, weight float64) {
	in = o.DType.Size()
	if o.Quant != QuantNone {
		s := o.Quant.Scheme()
		return s.Compute.Size(), s.WeightType().Size()
	}
	if o.Weight != "" {
		return in, o.Weight.Size()
	}
	return in, in
}

// moeString writes the moe op's spec after its name.
func (o Op) moeString(b *strings.Builder) {
	fmt.Fprintf(b, " tokens=%d hidden=%d inter=%d topk=%d experts=%d", o.Tokens, o.Hidden, o.Inter, o.TopK, o.Experts)
	if o.TP > 1 {
		fmt.Fprintf(b, " tp=%d", o.TP)
	}
	if o.EP > 1 {
		fmt.Fprintf(b, " ep=%d", o.EP)
	}
	switch o.Dist {
	case DistPowerLaw:
		fmt.Fprintf(b, " dist=power_law:%s", strconv.FormatFloat(o.Alpha, 'g', -1, 64))
	case DistUniform:
		b.WriteString(" dist=uniform")
	}
	if o.Ungated {
		b.WriteString(" ungated")
	}
	if o.Impl != "" {
		b.WriteString(" impl=" + o.Impl)
	}
}

// MaxExperts is the most experts a moe op takes: a hundred times today's
// largest layers (Qwen3.5's 512), so that the per-expert loads stay small.
const MaxExperts = 1 << 16

// moeValidate checks the experts split evenly over the GPUs.
func (o Op) moeValidate() error {
	switch {
	case o.Experts > MaxExperts:
		return fmt.Errorf("moe: experts=%d is more than %d", o.Experts, MaxExperts)
	case o.TopK > o.Experts:
		return fmt.Errorf("moe: topk=%d is more than the %d experts", o.TopK, o.Experts)
	case o.Experts%o.EP != 0:
		return fmt.Errorf("moe: ep=%d does not divide the %d experts", o.EP, o.Experts)
	case o.Inter%o.TP != 0:
		return fmt.Errorf("moe: tp=%d does not divide inter=%d", o.TP, o.Inter)
	}
	return nil
}
