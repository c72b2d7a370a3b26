package devices

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gpucalc/gpucalc/units"
	"go.yaml.in/yaml/v3"
)

// Efficiency holds the achievable fractions of datasheet peaks that apply to
// one device, for a roofline's expected time. The figures come from
// data/arch/efficiency.yaml: DRAM by memory type, GEMM by architecture family,
// kernel classes shared by every GPU.
type Efficiency struct {
	// Family is the architecture family whose GEMM figures apply, or
	// "default" when the catalog has none for the device's.
	Family string `json:"family"`
	// Stream is the fraction of datasheet DRAM bandwidth a streaming kernel
	// reaches on the device's memory type.
	Stream float64 `json:"stream"`
	// Reduction and GEMMMemory are fractions of the streaming bandwidth that
	// row reductions (norms, softmax) and memory-bound GEMMs reach.
	Reduction  float64 `json:"reduction"`
	GEMMMemory float64 `json:"gemm_memory"`
	// GEMMUnaligned scales the tensor-core rate of GEMMs whose contiguous
	// dimensions are not multiples of 16 bytes.
	GEMMUnaligned float64 `json:"gemm_unaligned"`
	// CausalDiagonal is the cost of a masked diagonal block of causal flash
	// attention relative to a full block.
	CausalDiagonal float64 `json:"causal_diagonal"`
	// BroadcastCopy is the output elements per SM per clock of PyTorch's
	// non-vectorized elementwise kernel copying an expanded (stride-0)
	// tensor, as repeat_kv does: its index arithmetic sets its pace.
	BroadcastCopy float64 `json:"broadcast_copy_per_sm_per_clock"`
	// GEMM is the fraction of the dense peak large GEMMs reach, by PeakKey.
	GEMM map[string]float64 `json:"gemm"`
	// Quant is the fraction of the scheme's compute peak (fp8, fp4) that
	// large quantized GEMMs reach as engines run them, by scheme (fp8,
	// fp8_block, nvfp4, mxfp4); a scheme without one takes GEMM's figure.
	Quant map[string]float64 `json:"quant,omitempty"`
	// QuantCTA is, by scheme, the fraction of an SM's share of the
	// scheme's dense peak that one CTA of the family's kernels for it
	// reaches alone. A scheme with one runs data-parallel kernels (each
	// CTA computes one tile over all of K, never split), so a GEMM of
	// few tiles takes K at that pace however few its bytes.
	QuantCTA map[string]float64 `json:"quant_cta,omitempty"`
	// SFUPerSMPerClock is the transcendental (exp, rsqrt, tanh) rate.
	SFUPerSMPerClock float64 `json:"sfu_per_sm_per_clock"`
	// L2PerSMPerClock is the bytes per SM per clock that kernels read
	// from a warm L2 (where a device has no measured L2 rate).
	L2PerSMPerClock float64 `json:"l2_per_sm_per_clock"`
	// GEMML2PerSMPerClock is the bytes per SM per clock that the family's
	// GEMM kernels (cuBLAS, CUTLASS) move from and to a warm L2, where
	// they reach less of it than other kernels; zero: L2PerSMPerClock.
	GEMML2PerSMPerClock float64 `json:"gemm_l2_per_sm_per_clock,omitempty"`
	// WeightCycleL2 is the share of L2 that keeps a weight's copies
	// replayed in turn (aiconfigurator's GEMM collector cycles
	// min(5, ⌈L2/W⌉) copies of a weight of W bytes): a linear whose copies
	// fit in that share reads its weight from a warm L2. Zero: the family's
	// rows read such weights from DRAM, as an engine's layers do.
	WeightCycleL2 float64 `json:"weight_cycle_l2,omitempty"`
	// GraphKernel is the time a kernel costs besides its work when
	// kernels replay back to back in a CUDA graph: the graph's kernel
	// period and the kernel's ramp, in seconds.
	GraphKernel float64 `json:"graph_kernel_seconds"`
	// GraphRamp is a tensor-core GEMM's start-up and drain when kernels
	// replay back to back in a CUDA graph (its pipeline fills and its
	// epilogue drains; no launch), in seconds; other kernels keep Ramp.
	GraphRamp float64 `json:"graph_ramp_seconds"`
	// QuantFixed is the fixed time of a quantized GEMM's activation path
	// besides its kernels' periods and work, by scheme (a per-tensor
	// scale's zeroing and grid-wide maximum), in seconds.
	QuantFixed map[string]float64 `json:"quant_fixed_seconds,omitempty"`
	// AttentionCTA is the SM time a serving engine's paged attention
	// kernel spends on each CTA besides its blocks (the page table read,
	// the query loaded, the output and its log-sum-exp written), in
	// seconds; CTAs resident together share an SM, so n CTAs cost n times
	// this over the SMs.
	AttentionCTA float64 `json:"attention_cta_seconds"`
	// PrefillCTA is, where the family's engine runs prefill (a paged
	// layer that is not a decode step) as one CTA per sequence × query
	// head × 128-query tile (no KV group's rows packed together, no split
	// of the keys), the SM time each such CTA spends besides its blocks,
	// in seconds; zero: prefill takes the fastest of the forward and
	// split-KV kernels, each CTA at AttentionCTA.
	PrefillCTA float64 `json:"prefill_cta_seconds,omitempty"`
	// AttentionGroupMax is the most query heads per KV head the family's
	// engine decode kernel packs into one CTA's rows (TensorRT-LLM's XQA
	// kernels: 32); a decode step of a larger group, or of one query head
	// per KV head (which XQA leaves to it), runs the engine's generic
	// masked kernel instead, one CTA per query head reading its K and V.
	// Zero: no such limit (the engine's decode kernel packs any group).
	AttentionGroupMax int `json:"attention_group_max,omitempty"`
	// AttentionHeadCTA is the SM time each CTA of that generic kernel
	// spends besides its reads, in seconds (as AttentionCTA).
	AttentionHeadCTA float64 `json:"attention_head_cta_seconds,omitempty"`
	// AttentionMMA is the fraction of the family's GEMM rate that flash
	// attention's products reach in a serving engine's kernels, by peak key
	// (their tiles are narrower than a GEMM's, K only a head dimension
	// deep; fp8 kernels also transpose V and convert P in registers); a
	// key without a figure gets the GEMM rate.
	AttentionMMA map[string]float64 `json:"attention_mma,omitempty"`
	// TritonMMA is, as AttentionMMA, the fraction of the family's GEMM
	// rate that a serving engine's Triton attention kernels (impl=triton)
	// reach for their products, by peak key; a key without a figure gets
	// the family's AttentionMMA.
	TritonMMA map[string]float64 `json:"triton_mma,omitempty"`
	// TritonRead is the bytes per clock one CTA of a Triton decode
	// kernel reads its K and V at (a CTA of a few warps gathers them
	// row by row through the page table, two blocks in flight); zero:
	// no such limit.
	TritonRead float64 `json:"triton_cta_bytes_per_clock,omitempty"`
	// KVDequant is the KV-cache elements per SM per clock a paged
	// attention kernel converts from a narrower cache type (fp8) to its
	// compute type.
	KVDequant float64 `json:"kv_dequant_per_sm_per_clock"`
	// AllReduce is NCCL's all-reduce over the device's peer link, fitted
	// for the link's kind (NVLink generation, PCIe); nil where the catalog
	// has none for it.
	AllReduce *AllReduceFit `json:"allreduce,omitempty"`
	// StreamK says the family's GEMM libraries run persistent stream-K
	// kernels, which share the last wave's tiles among all SMs: a GEMM
	// costs its tiles' work spread over the SMs, with no wave tail.
	StreamK bool `json:"stream_k"`
	// PagedAttention is a serving engine's attention layer's fixed cost
	// besides its kernels' work and periods (metadata, the cache append's
	// bookkeeping), in seconds.
	PagedAttention float64 `json:"paged_attention_seconds"`
	// PagedNative replaces PagedAttention for any paged layer (prefill
	// or decode step) over a cache of the compute type, where the
	// family's engine stores this step's K and V as they come and needs
	// no conversion to a narrower cache type; PagedDecode, where set,
	// takes precedence for decode steps. Zero: PagedAttention.
	PagedNative float64 `json:"paged_native_seconds,omitempty"`
	// PagedDecode replaces PagedAttention for a decode step (one query
	// per sequence) over a cache of the compute type, where the family's
	// engine runs another, lighter decode path for it than for prefill
	// and an fp8 cache; zero: PagedAttention.
	PagedDecode float64 `json:"paged_decode_seconds,omitempty"`
	// LaunchOverhead is the time of one kernel launch and Ramp the
	// start-up and drain of a kernel, in seconds: together the fixed cost
	// of an op.
	LaunchOverhead float64 `json:"launch_overhead_seconds"`
	Ramp           float64 `json:"ramp_seconds"`
	// Tiles are the GEMM CTA tiles the model chooses from.
	Tiles []Tile `json:"gemm_tiles"`
	// Sources maps each figure ("memory.HBM3", "gemm.bf16_tensor") to its
	// source.
	Sources map[string]string `json:"sources"`
	// Notes say where a default stood in for a missing figure.
	Notes []string `json:"notes,omitempty"`
}

// AllReduceFit is NCCL's all-reduce on one kind of link as two protocols,
// the faster taken, as NCCL's tuner takes it: LL (low latency, half the
// bus bandwidth: each 8-byte store carries a 4-byte flag), LLLatency + 2(n−1)
// steps of Hop + bus bytes at half the rate; and Simple, pipelined over
// chunks, SimpleLatency + (√(2(n−1)·Hop) + √(bus bytes / rate))². The rate
// is LinkFraction of the link's per-direction bandwidth, divided by
// (n/2)^RankExponent where every rank's traffic shares one path (PCIe
// without peer access: through host memory). Where NVLink switches reduce
// in the network (NVLink SHARP, NVSwitch 3 and later: Hopper and Blackwell
// HGX), NCCL's NVLS algorithm is a third choice: each GPU sends and
// receives its message once, whatever the ranks, NVLSLatency + message /
// (NVLSFraction of the per-direction rate); NVLSFraction is 0 on links
// without it.
type AllReduceFit struct {
	Link          string  `json:"link"`
	LLLatency     float64 `json:"ll_latency_seconds"`
	Hop           float64 `json:"hop_seconds"`
	SimpleLatency float64 `json:"simple_latency_seconds"`
	LinkFraction  float64 `json:"link_fraction"`
	RankExponent  float64 `json:"rank_exponent"`
	NVLSLatency   float64 `json:"nvls_latency_seconds,omitempty"`
	NVLSFraction  float64 `json:"nvls_fraction,omitempty"`
	Source        string  `json:"source"`
}

// Tile is a GEMM CTA tile and its throughput relative to the largest.
type Tile struct {
	M          int     `json:"m"`
	N          int     `json:"n"`
	Efficiency float64 `json:"efficiency"`
}

type efficiencyFile struct {
	Sources        map[string]string  `yaml:"sources"`
	LaunchOverhead sourced            `yaml:"launch_overhead"`
	Memory         map[string]sourced `yaml:"memory"`
	Kernels        struct {
		Ramp           sourced `yaml:"ramp"`
		Reduction      sourced `yaml:"reduction"`
		GEMMMemory     sourced `yaml:"gemm_memory"`
		GEMMUnaligned  sourced `yaml:"gemm_unaligned"`
		CausalDiagonal sourced `yaml:"causal_diagonal"`
		BroadcastCopy  sourced `yaml:"broadcast_copy"`
	} `yaml:"kernels"`
	Tiles []struct {
		M          int     `yaml:"m"`
		N          int     `yaml:"n"`
		Efficiency sourced `yaml:"efficiency"`
	} `yaml:"gemm_tiles"`
	Collectives map[string]struct {
		LLLatency     string `yaml:"ll_latency"`
		Hop           string `yaml:"hop"`
		SimpleLatency string `yaml:"simple_latency"`
		LinkFraction  string `yaml:"link_fraction"`
		RankExponent  string `yaml:"rank_exponent"`
		NVLSLatency   string `yaml:"nvls_latency"`
		NVLSFraction  string `yaml:"nvls_fraction"`
		Source        string `yaml:"source"`
	} `yaml:"collectives"`
	Archs map[string]struct {
		SFU         sourced            `yaml:"sfu_per_sm_per_clock"`
		L2          sourced            `yaml:"l2_per_sm_per_clock"`
		GEMML2      sourced            `yaml:"gemm_l2_per_sm_per_clock"`
		WeightCycle sourced            `yaml:"weight_cycle_l2"`
		GraphKernel sourced            `yaml:"graph_kernel"`
		StreamK     *sourcedBool       `yaml:"stream_k"`
		GraphRamp   sourced            `yaml:"graph_ramp"`
		AttnCTA     sourced            `yaml:"attention_cta"`
		AttnGroup   sourced            `yaml:"attention_group_max"`
		AttnHeadCTA sourced            `yaml:"attention_head_cta"`
		AttnMMA     map[string]sourced `yaml:"attention_mma"`
		TritonMMA   map[string]sourced `yaml:"triton_mma"`
		TritonRead  sourced            `yaml:"triton_cta_bytes_per_clock"`
		PrefillCTA  sourced            `yaml:"prefill_cta"`
		KVDequant   sourced            `yaml:"kv_dequant_per_sm_per_clock"`
		QuantFixed  map[string]sourced `yaml:"quant_fixed"`
		Paged       sourced            `yaml:"paged_attention"`
		PagedDecode sourced            `yaml:"paged_decode"`
		PagedNative sourced            `yaml:"paged_native"`
		GEMM        map[string]sourced `yaml:"gemm"`
		Quant       map[string]sourced `yaml:"quant"`
		QuantCTA    map[string]sourced `yaml:"quant_cta"`
	} `yaml:"archs"`
}

// sourcedBool is a yes-or-no figure and the key of its source.
type sourcedBool struct {
	Value  bool   `yaml:"value"`
	Source string `yaml:"source"`
}

// efficiencyTable is the parsed file, with each figure resolved to a number
// and a source text.
type efficiencyTable struct {
	base Efficiency // kernel classes, launch, tiles
	// collectives are the all-reduce fits by link kind, longest kind first.
	collectives []AllReduceFit
	memory      map[string]figure
	archs       map[string]Efficiency
}

var efficiencies = sync.OnceValues(func() (*efficiencyTable, error) {
	data, err := dataFS.ReadFile("data/arch/efficiency.yaml")
	if err != nil {
		return nil, err
	}
	t, err := parseEfficiency(data)
	if err != nil {
		return nil, fmt.Errorf("data/arch/efficiency.yaml: %w", err)
	}
	return t, nil
})

func parseEfficiency(data []byte) (*efficiencyTable, error) {
	var f efficiencyFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	num := func(what string, s sourced, parse func(string) (float64, error)) (figure, error) {
		v, err := s.resolve(what, f.Sources, parse)
		if err == nil && v.v == 0 {
			err = fmt.Errorf("%s: %q is not a positive number", what, s.Value)
		}
		return v, err
	}
	frac := func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
	t := &efficiencyTable{memory: map[string]figure{}, archs: map[string]Efficiency{}}
	b := &t.base
	b.Sources = map[string]string{}
	for _, x := range []struct {
		name  string
		s     sourced
		dst   *float64
		parse func(string) (float64, error)
	}{
		{"launch_overhead", f.LaunchOverhead, &b.LaunchOverhead, units.ParseDuration},
		{"kernels.ramp", f.Kernels.Ramp, &b.Ramp, units.ParseDuration},
		{"kernels.reduction", f.Kernels.Reduction, &b.Reduction, frac},
		{"kernels.gemm_memory", f.Kernels.GEMMMemory, &b.GEMMMemory, frac},
		{"kernels.gemm_unaligned", f.Kernels.GEMMUnaligned, &b.GEMMUnaligned, frac},
		{"kernels.causal_diagonal", f.Kernels.CausalDiagonal, &b.CausalDiagonal, frac},
		{"kernels.broadcast_copy", f.Kernels.BroadcastCopy, &b.BroadcastCopy, frac},
	} {
		v, err := num(x.name, x.s, x.parse)
		if err != nil {
			return nil, err
		}
		*x.dst, b.Sources[x.name] = v.v, v.src
	}
	for i, tl := range f.Tiles {
		v, err := num(fmt.Sprintf("gemm_tiles[%d]", i), tl.Efficiency, frac)
		if err != nil {
			return nil, err
		}
		if tl.M <= 0 || tl.N <= 0 {
			return nil, fmt.Errorf("gemm_tiles[%d]: m and n must be positive", i)
		}
		b.Tiles = append(b.Tiles, Tile{M: tl.M, N: tl.N, Efficiency: v.v})
		b.Sources["gemm_tiles"] = v.src
	}
	for k, s := range f.Memory {
		v, err := num("memory."+k, s, frac)
		if err != nil {
			return nil, err
		}
		t.memory[strings.ToLower(k)] = v
	}
	if _, ok := t.memory["default"]; !ok {
		return nil, fmt.Errorf("memory: missing default")
	}
	for link, c := range f.Collectives {
		src, ok := f.Sources[c.Source]
		if !ok {
			return nil, fmt.Errorf("collectives.%s: source %q is not in the file's sources", link, c.Source)
		}
		fit := AllReduceFit{Link: link, Source: src}
		for _, x := range []struct {
			name, s string
			dst     *float64
			parse   func(string) (float64, error)
		}{{"ll_latency", c.LLLatency, &fit.LLLatency, units.ParseDuration}, {"hop", c.Hop, &fit.Hop, units.ParseDuration},
			{"simple_latency", c.SimpleLatency, &fit.SimpleLatency, units.ParseDuration}, {"link_fraction", c.LinkFraction, &fit.LinkFraction, frac},
			{"rank_exponent", c.RankExponent, &fit.RankExponent, frac},
			{"nvls_latency", c.NVLSLatency, &fit.NVLSLatency, units.ParseDuration}, {"nvls_fraction", c.NVLSFraction, &fit.NVLSFraction, frac}} {
			if x.s == "" && strings.HasPrefix(x.name, "nvls_") {
				continue // a link without NVLink SHARP
			}
			v, err := x.parse(x.s)
			if err != nil || v < 0 || math.IsNaN(v) {
				return nil, fmt.Errorf("collectives.%s.%s: %q is not a non-negative number", link, x.name, x.s)
			}
			*x.dst = v
		}
		if fit.LinkFraction <= 0 || fit.LinkFraction > 1 {
			return nil, fmt.Errorf("collectives.%s.link_fraction: %s is not in (0, 1]", link, c.LinkFraction)
		}
		if fit.NVLSFraction > 1 {
			return nil, fmt.Errorf("collectives.%s.nvls_fraction: %s is not in (0, 1]", link, c.NVLSFraction)
		}
		t.collectives = append(t.collectives, fit)
	}
	sort.Slice(t.collectives, func(i, j int) bool { return len(t.collectives[i].Link) > len(t.collectives[j].Link) })
	for fam, a := range f.Archs {
		e := Efficiency{Family: fam, GEMM: map[string]float64{}, Sources: map[string]string{}}
		at := func(key string) string { return "archs." + fam + "." + key }
		v, err := num(at("sfu_per_sm_per_clock"), a.SFU, frac)
		if err != nil {
			return nil, err
		}
		e.SFUPerSMPerClock, e.Sources["sfu_per_sm_per_clock"] = v.v, v.src
		// Every other figure is optional per family: a family without the L2
		// rate, the graph kernel period or paged attention's cost takes the
		// default's; without another, the model does without it.
		var group float64
		for _, x := range []struct {
			key     string
			s       sourced
			dst     *float64
			parse   func(string) (float64, error)
			ok      func(float64) bool
			allowed string
		}{
			{"l2_per_sm_per_clock", a.L2, &e.L2PerSMPerClock, frac, nil, ""},
			{"gemm_l2_per_sm_per_clock", a.GEMML2, &e.GEMML2PerSMPerClock, frac, nil, ""},
			{"paged_attention", a.Paged, &e.PagedAttention, units.ParseDuration, nil, ""},
			{"paged_decode", a.PagedDecode, &e.PagedDecode, units.ParseDuration, nil, ""},
			{"paged_native", a.PagedNative, &e.PagedNative, units.ParseDuration, nil, ""},
			{"graph_kernel", a.GraphKernel, &e.GraphKernel, units.ParseDuration, nil, ""},
			{"graph_ramp", a.GraphRamp, &e.GraphRamp, units.ParseDuration, nil, ""},
			{"attention_cta", a.AttnCTA, &e.AttentionCTA, units.ParseDuration, nil, ""},
			{"prefill_cta", a.PrefillCTA, &e.PrefillCTA, units.ParseDuration, nil, ""},
			{"triton_cta_bytes_per_clock", a.TritonRead, &e.TritonRead, frac, nil, ""},
			{"attention_group_max", a.AttnGroup, &group, frac, func(v float64) bool { return v >= 1 && v == math.Trunc(v) }, "a whole number of heads"},
			{"weight_cycle_l2", a.WeightCycle, &e.WeightCycleL2, frac, func(v float64) bool { return v >= 0 && v <= 1 }, "in [0, 1]"},
			{"attention_head_cta", a.AttnHeadCTA, &e.AttentionHeadCTA, units.ParseDuration, nil, ""},
			{"kv_dequant_per_sm_per_clock", a.KVDequant, &e.KVDequant, frac, nil, ""},
		} {
			if x.s.Value == "" {
				continue
			}
			if v, err = num(at(x.key), x.s, x.parse); err != nil {
				return nil, err
			}
			if x.ok != nil && !x.ok(v.v) {
				return nil, fmt.Errorf("%s: %s is not %s", at(x.key), x.s.Value, x.allowed)
			}
			*x.dst, e.Sources[x.key] = v.v, v.src
		}
		e.AttentionGroupMax = int(group)
		for k := range a.GEMM {
			if !validPeakKey(k) {
				return nil, fmt.Errorf("%s: unknown peak %q", at("gemm"), k)
			}
		}
		for _, x := range []struct {
			key   string
			m     map[string]sourced
			dst   *map[string]float64
			parse func(string) (float64, error)
			ok    func(float64) bool
		}{
			{"gemm", a.GEMM, &e.GEMM, frac, nil},
			{"quant", a.Quant, &e.Quant, frac, nil},
			{"quant_cta", a.QuantCTA, &e.QuantCTA, frac, nil},
			{"quant_fixed", a.QuantFixed, &e.QuantFixed, units.ParseDuration, nil},
			{"attention_mma", a.AttnMMA, &e.AttentionMMA, frac, func(v float64) bool { return v > 0 && v <= 1 }},
			{"triton_mma", a.TritonMMA, &e.TritonMMA, frac, func(v float64) bool { return v > 0 && v <= 1 }},
		} {
			for k, sv := range x.m {
				if v, err = num(at(x.key+"."+k), sv, x.parse); err != nil {
					return nil, err
				}
				if x.ok != nil && !x.ok(v.v) {
					return nil, fmt.Errorf("%s: %s is not in (0, 1]", at(x.key+"."+k), sv.Value)
				}
				if *x.dst == nil {
					*x.dst = map[string]float64{}
				}
				(*x.dst)[k], e.Sources[x.key+"."+k] = v.v, v.src
			}
		}
		if a.StreamK != nil {
			if _, ok := f.Sources[a.StreamK.Source]; !ok {
				return nil, fmt.Errorf("%s: unknown source %q", at("stream_k"), a.StreamK.Source)
			}
			e.StreamK, e.Sources["stream_k"] = a.StreamK.Value, f.Sources[a.StreamK.Source]
		}
		t.archs[fam] = e
	}
	def, ok := t.archs["default"]
	if !ok {
		return nil, fmt.Errorf("archs: missing default")
	}
	if def.L2PerSMPerClock == 0 || def.GraphKernel == 0 || def.PagedAttention == 0 {
		return nil, fmt.Errorf("archs.default: needs l2_per_sm_per_clock, graph_kernel and paged_attention")
	}
	for fam, e := range t.archs {
		for _, x := range []struct {
			key string
			v   *float64
			d   float64
		}{{"l2_per_sm_per_clock", &e.L2PerSMPerClock, def.L2PerSMPerClock}, {"graph_kernel", &e.GraphKernel, def.GraphKernel},
			{"paged_attention", &e.PagedAttention, def.PagedAttention}} {
			if *x.v == 0 {
				*x.v, e.Sources[x.key] = x.d, def.Sources[x.key]
			}
		}
		t.archs[fam] = e
	}
	return t, nil
}

// Efficiency returns the achievable fractions that apply to d: its memory
// type's DRAM figure and its architecture family's GEMM figures, falling back
// to the defaults (with a note) where the catalog has none.
func (d Device) Efficiency() (Efficiency, error) {
	t, err := efficiencies()
	if err != nil {
		return Efficiency{}, err
	}
	a, ok := t.archs[d.Architecture]
	e := t.base
	e.Sources = make(map[string]string, len(t.base.Sources)+len(a.Sources)+1)
	for k, v := range t.base.Sources {
		e.Sources[k] = v
	}
	e.Notes = nil
	if !ok {
		a = t.archs["default"]
		e.Notes = append(e.Notes, fmt.Sprintf("no GEMM efficiency figures for the %s family; the default (H100-measured) figures are used", d.Architecture))
	}
	e.Family, e.GEMM, e.Quant, e.SFUPerSMPerClock = a.Family, a.GEMM, a.Quant, a.SFUPerSMPerClock
	e.L2PerSMPerClock, e.GraphKernel, e.PagedAttention, e.StreamK = a.L2PerSMPerClock, a.GraphKernel, a.PagedAttention, a.StreamK
	e.QuantFixed, e.QuantCTA, e.GraphRamp, e.AttentionCTA, e.KVDequant = a.QuantFixed, a.QuantCTA, a.GraphRamp, a.AttentionCTA, a.KVDequant
	e.AttentionMMA, e.AttentionGroupMax, e.AttentionHeadCTA = a.AttentionMMA, a.AttentionGroupMax, a.AttentionHeadCTA
	e.TritonMMA, e.TritonRead = a.TritonMMA, a.TritonRead
	e.PagedDecode, e.WeightCycleL2, e.GEMML2PerSMPerClock = a.PagedDecode, a.WeightCycleL2, a.GEMML2PerSMPerClock
	e.PrefillCTA, e.PagedNative = a.PrefillCTA, a.PagedNative
	if d.SFUPerSMPerClock > 0 {
		e.SFUPerSMPerClock, e.Sources["sfu_per_sm_per_clock"] = d.SFUPerSMPerClock, d.Sources["sfu_per_sm_per_clock"]
	}
	if e.GraphRamp == 0 {
		e.GraphRamp, e.Sources["graph_ramp"] = e.Ramp, e.Sources["kernels.ramp"]
	}
	for k, v := range a.Sources {
		e.Sources[k] = v
	}
	for i, c := range t.collectives {
		if strings.HasPrefix(d.Peer().Type, c.Link) {
			e.AllReduce = &t.collectives[i]
			break
		}
	}
	m, ok := t.memory[strings.ToLower(d.Memory.Type)]
	if !ok {
		m = t.memory["default"]
		e.Notes = append(e.Notes, fmt.Sprintf("no streaming-bandwidth figure for %s memory; the default fraction %.2f is used", d.Memory.Type, m.v))
	}
	e.Stream, e.Sources["memory"] = m.v, m.src
	return e, nil
}
