package review

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/roofline"
)

// ModelWorkload is one step of a model as a workload: the op list of
// model.Config.Ops with its counts, and the memory one GPU holds.
func ModelWorkload(c model.Config, s model.Shape, d devices.Device) (ops.Workload, model.Memory, error) {
	s, err := c.FillShape(s)
	if err != nil {
		return ops.Workload{}, model.Memory{}, err
	}
	list, err := c.Ops(s)
	if err != nil {
		return ops.Workload{}, model.Memory{}, err
	}
	mem, err := c.Memory(s, d)
	if err != nil {
		return ops.Workload{}, model.Memory{}, err
	}
	w := ops.Workload{Name: fmt.Sprintf("%s %s, batch %d", c.Name, s.Phase, s.Batch)}
	if s.Phase == model.Prefill {
		w.Name += fmt.Sprintf(", %d prompt tokens", s.Seq)
	} else {
		w.Name += fmt.Sprintf(", %d tokens of context", s.Ctx)
	}
	if s.TP > 1 {
		w.Name += fmt.Sprintf(", tp %d", s.TP)
	}
	for _, o := range list {
		w.Entries = append(w.Entries, o.Entry)
	}
	w.Memory = int64(mem.Total)
	return w, mem, nil
}

// CheckModel reviews one step of a model on a device: every workload check
// on its op list, plus three model checks: kv_cache_size (the cache larger
// than the weights), gqa_expansion (what repeating the KV heads before
// attention, as transformers' eager path does, would cost) and tp_allreduce
// (the tensor-parallel all-reduces' share of the step).
func CheckModel(c model.Config, s model.Shape, d devices.Device, reference []devices.Device) (Report, error) {
	s, err := c.FillShape(s)
	if err != nil {
		return Report{}, err
	}
	w, mem, err := ModelWorkload(c, s, d)
	if err != nil {
		return Report{}, err
	}
	r, err := Check(w, d, reference)
	if err != nil {
		return Report{}, err
	}
	m, err := roofline.New(d)
	if err != nil {
		return Report{}, err
	}
	ch := &checker{w: w, d: d, m: m, r: &r}
	ch.fit(c, s, mem)
	ch.kvSize(s, mem)
	ch.gqaExpansion(c, s)
	ch.allReduce(s)
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Severity.rank(), b.Severity.rank()), cmp.Compare(b.Saves, a.Saves))
	})
	return r, nil
}

// fit reports a step that does not fit in the memory CUDA can allocate.
func (c *checker) fit(cfg model.Config, s model.Shape, mem model.Memory) {
	if mem.Fits {
		return
	}
	fix := "no tensor-parallel degree up to 64 fits: hold weights and cache in fewer bytes (fp8, int4), or shorten the context"
	if tp := cfg.SmallestTP(s, c.d); tp > 0 {
		fix = fmt.Sprintf("shard over %d GPUs (tensor parallel), or hold weights and cache in fewer bytes (fp8 weights and KV)", tp)
	}
	c.add(Finding{
		Check: "memory_capacity", Severity: Error,
		Message: fmt.Sprintf("one GPU holds %s (weights %s, KV cache %s, workspace %s); %s can allocate %s.",
			size(mem.Total), size(mem.Weights), size(mem.KV), size(mem.Workspace), c.d.Name, size(mem.Usable)),
		Fix:     fix,
		Numbers: map[string]float64{"needed_bytes": mem.Total, "usable_bytes": mem.Usable, "weights_bytes": mem.Weights, "kv_bytes": mem.KV},
	})
}

// kvSize reports a KV cache larger than the weights: decode then reads more
// cache than weights per step, and the batch is bounded by the cache.
func (c *checker) kvSize(s model.Shape, mem model.Memory) {
	if mem.KV <= mem.Weights {
		return
	}
	c.add(Finding{
		Check: "kv_cache_size", Severity: Warning,
		Message: fmt.Sprintf("the KV cache (%s for %d sequences, %s per token) is %.1f× the weights (%s) on each GPU: every decode step reads more cache than weights, and the cache bounds the batch.",
			size(mem.KV), s.Batch, size(mem.KVPerToken), mem.KV/mem.Weights, size(mem.Weights)),
		Fix:     "store the cache in fp8 (halves it), page it so each sequence holds only its tokens (vLLM PagedAttention), or serve fewer or shorter sequences per GPU",
		Numbers: map[string]float64{"kv_bytes": mem.KV, "weights_bytes": mem.Weights, "kv_bytes_per_token": mem.KVPerToken},
	})
}

// gqaExpansion prices repeating the KV heads to every query head before
// attention (transformers' repeat_kv, used by its eager attention and by
// SDPA when a mask is given): each layer copies K and V to all query heads
// and attention then reads the copies.
func (c *checker) gqaExpansion(cfg model.Config, s model.Shape) {
	if cfg.MLA() || cfg.KVHeads == cfg.Heads {
		return
	}
	h, kv := cfg.Heads/s.TP, max(1, cfg.KVHeads/s.TP)
	if h == kv {
		return
	}
	keys := s.Ctx + 1
	if s.Phase == model.Prefill {
		keys = s.Seq
	}
	per := float64(s.Batch*keys*cfg.HeadDim) * 2 * s.KV.Size() // K and V of one head
	// Read the KV heads and write h expanded heads; attention then reads h
	// heads instead of kv: kv + h + (h − kv) = 2h heads more per layer.
	extra := float64(cfg.Layers) * per * 2 * float64(h)
	t := extra / c.m.Stream()
	// The op list keeps the heads grouped, so this is what expanding would
	// cost (information), not a saving.
	c.add(Finding{
		Check: "gqa_expansion", Severity: Info,
		Message: fmt.Sprintf("%d query heads share %d KV heads per GPU; an implementation that repeats the KV heads before attention (transformers' repeat_kv in eager attention, or SDPA with a mask) moves %s more per step over %d layers, about %s more (%s of this step's %s with the heads kept grouped, as here).",
			h, kv, size(extra), cfg.Layers, dur(t), c.share(t), dur(c.r.Expected)),
		Fix:     "keep the KV heads grouped: F.scaled_dot_product_attention(..., enable_gqa=True), FlashAttention or FlashInfer (transformers: attn_implementation=\"flash_attention_2\", or sdpa without an explicit mask)",
		Numbers: map[string]float64{"extra_bytes": extra, "extra_seconds": t, "query_heads": float64(h), "kv_heads": float64(kv)},
	})
}

// allReduce reports the tensor-parallel all-reduces' share of the step.
func (c *checker) allReduce(s model.Shape) {
	if s.TP <= 1 {
		return
	}
	var t, n float64
	for _, o := range c.r.Ops {
		if o.Point.Op.Kind == ops.AllReduce {
			t += o.Expected
			n += float64(o.Count)
		}
	}
	sev := Info
	if t >= 0.1*c.r.Expected {
		sev = Warning
	}
	c.add(Finding{
		Check: "tp_allreduce", Severity: sev,
		Message: fmt.Sprintf("%.0f all-reduces over %d GPUs (two per layer) take %s, %s of the step's %s.", n, s.TP, dur(t), c.share(t), dur(c.r.Expected)),
		Fix:     "capture the step with its all-reduces in a CUDA graph and use a one-shot or NVLink SHARP all-reduce for small messages, overlap the all-reduce with the next GEMM, or use fewer GPUs per replica with a larger batch",
		Numbers: map[string]float64{"allreduce_seconds": t, "allreduces": n, "tp": float64(s.TP), "expected_seconds": c.r.Expected},
	})
}
