package deploy

import (
	"math"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
)

// The engines' defaults by GPU, as their sources set them: SGLang's
// chunked_prefill_size and mem_fraction_static by the GPU's memory
// (server_args.py), vLLM's budget on the A100 and on GPUs of 70 GiB or
// more (arg_utils.py); a query's override wins.
func TestEngineTiers(t *testing.T) {
	gib := func(name string) float64 {
		d, err := devices.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		return float64(d.Memory.Bytes) / (1 << 30)
	}
	share := func(name string, reserve float64) float64 {
		g := gib(name)
		return math.Round((g-reserve)/g*1000) / 1000
	}
	for _, c := range []struct {
		engine, device string
		gpus           int64
		dpAttention    bool
		q              Query
		tokens, seqs   int64
		share          float64
	}{
		{"sglang", "h100", 1, false, Query{}, 8192, 1024, share("h100", 9.5+0.5)},
		{"sglang", "h100", 8, false, Query{}, 8192, 1024, share("h100", 9.5+4)},
		{"sglang", "h200", 8, false, Query{}, 8192, 1024, share("h200", 12+4)},
		{"sglang", "b200", 8, false, Query{}, 16384, 1024, share("b200", 32)},
		{"sglang", "b200", 8, true, Query{}, 16384, 1024, share("b200", 32+4)},
		{"sglang", "b200", 8, false, Query{MaxTokens: 4096, MemoryShare: 0.8}, 4096, 1024, 0.8},
		{"vllm", "h100", 1, false, Query{}, 8192, 1024, 0.9},
		{"vllm", "a100", 1, false, Query{}, 2048, 256, 0.9},
		{"vllm", "l40s", 1, false, Query{}, 2048, 256, 0.9},
		{"trtllm", "b200", 8, false, Query{}, 8192, 2048, 0.9},
	} {
		c.q.Engine = c.engine
		e, err := c.q.engine()
		if err != nil {
			t.Fatal(err)
		}
		d, err := devices.Lookup(c.device)
		if err != nil {
			t.Fatal(err)
		}
		e = e.onDevice(d, c.gpus, c.dpAttention, c.q)
		if e.MaxTokens != c.tokens || e.MaxSeqs != c.seqs || e.MemoryShare != c.share {
			t.Errorf("%s on %d × %s (dp attention %v): budget %d, sequences %d, share %g; want %d, %d, %g",
				c.engine, c.gpus, c.device, c.dpAttention, e.MaxTokens, e.MaxSeqs, e.MemoryShare, c.tokens, c.seqs, c.share)
		}
	}
}
