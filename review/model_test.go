package review

import (
	"math"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
)

func finding(r Report, check string) *Finding {
	for i := range r.Findings {
		if r.Findings[i].Check == check {
			return &r.Findings[i]
		}
	}
	return nil
}

func TestCheckModel(t *testing.T) {
	h, err := devices.Lookup("h100")
	if err != nil {
		t.Fatal(err)
	}
	c8, _ := model.LoadBuiltin("llama-3.1-8b")
	c70, _ := model.LoadBuiltin("llama-3.1-70b")

	// Batch 64 at 4096 tokens: 32 layers × 2 × 8 × 128 × 2 bytes × 64 × 4097
	// of cache against 16,060,522,496 bytes of weights.
	r, err := CheckModel(c8, model.Shape{Phase: model.Decode, Batch: 64, Ctx: 4096}, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	kv := 32.0 * 2 * 8 * 128 * 2 * 64 * 4097
	if f := finding(r, "kv_cache_size"); f == nil || f.Severity != Warning || f.Numbers["kv_bytes"] != kv || f.Numbers["weights_bytes"] != 16060522496 {
		t.Errorf("kv_cache_size: %+v", f)
	}
	// Repeating 8 KV heads to 32: read 8, write 32, attention reads 32
	// instead of 8: 64 heads' K and V more per layer.
	if f := finding(r, "gqa_expansion"); f == nil || math.Abs(f.Numbers["extra_bytes"]-32*64*(64*4097*128*2*2)) > 1 {
		t.Errorf("gqa_expansion: %+v", f)
	}
	if finding(r, "tp_allreduce") != nil || finding(r, "memory_capacity") != nil {
		t.Error("tp_allreduce or memory_capacity without tensor parallel, on a model that fits")
	}
	// Batch 1 at 512 tokens: the cache is far smaller than the weights.
	if r, _ := CheckModel(c8, model.Shape{Phase: model.Decode, Batch: 1, Ctx: 512}, h, nil); finding(r, "kv_cache_size") != nil {
		t.Error("kv_cache_size at batch 1")
	}

	// 70B in bf16 on one H100 does not fit; on four the all-reduces show.
	r, err = CheckModel(c70, model.Shape{Phase: model.Decode, Batch: 32, Ctx: 8192}, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := finding(r, "memory_capacity"); f == nil || f.Severity != Error {
		t.Errorf("memory_capacity: %+v", f)
	}
	r, err = CheckModel(c70, model.Shape{Phase: model.Decode, Batch: 32, Ctx: 8192, TP: 4}, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := finding(r, "tp_allreduce"); f == nil || f.Numbers["allreduces"] != 160 || f.Numbers["allreduce_seconds"] <= 0 {
		t.Errorf("tp_allreduce: %+v", f)
	}
}
