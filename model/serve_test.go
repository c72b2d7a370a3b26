package model

import (
	"strings"
	"testing"
)

// TestServeMemoryPhase: the memory shown is the larger phase's, and its
// workspace is that phase's. Mixtral on two A100s, prompt 1024, decode at
// 32768 tokens: the decode step's cache (32 layers × 2 × 4 KV heads per GPU
// × 128 × 2 bytes = 64 KiB per token, × 32769 tokens) outweighs the prefill's activations, so
// the workspace is the decode step's one token: (2 × 4096 + the two routed
// experts' 3 × 2 × 14336 / 2) × 2 bytes + 32000 / 2 fp32 logits = 166400
// bytes, not the prefill's.
func TestServeMemoryPhase(t *testing.T) {
	c := builtin(t, "mixtral-8x7b-v0.1")
	m := onDevice(t, "a100")
	r, err := c.Serve(Request{TP: 2, Prompt: 1024, Ctx: 32768}, m)
	if err != nil {
		t.Fatal(err)
	}
	if r.MemoryPhase != Decode || r.Memory.Workspace != 166400 || r.Memory.KV != 32769*64<<10 || r.Memory.KVPerToken != 64<<10 {
		t.Errorf("phase %s, workspace %.0f, KV %.0f (%.0f per token per GPU); want decode, 166400, 32769 × 64 KiB",
			r.MemoryPhase, r.Memory.Workspace, r.Memory.KV, r.Memory.KVPerToken)
	}
	// A prompt of 32768 tokens: the prefill's activations dominate.
	r, err = c.Serve(Request{TP: 2, Prompt: 32768}, m)
	if err != nil {
		t.Fatal(err)
	}
	if r.MemoryPhase != Prefill || r.Memory.Workspace != r.Prefill.Memory.Workspace || r.Memory.Workspace < 1<<30 {
		t.Errorf("prompt 32768: phase %s, workspace %.0f; want the prefill's, over 1 GiB", r.MemoryPhase, r.Memory.Workspace)
	}
}

// TestServeFlagsConsistent: a context shorter than the prompt is refused
// (the cache holds the prompt); one beyond the model's positions is
// answered with a warning (memory and time hold: the reference decoder
// timed Phi-3-mini-4k at 32768 tokens).
func TestServeFlagsConsistent(t *testing.T) {
	m := h100(t)
	if _, err := builtin(t, "llama-3.1-8b").Serve(Request{Prompt: 4096, Ctx: 1024}, m); err == nil || !strings.Contains(err.Error(), "ctx=1024 is less than prompt=4096") {
		t.Errorf("prompt 4096, ctx 1024: %v; want an error", err)
	}
	for _, tc := range []struct {
		model string
		q     Request
		warn  string
	}{
		{"phi-3-mini-4k-instruct", Request{Prompt: 1, Ctx: 32768}, "a context of 32768 tokens is beyond the 4096 positions"},
		{"phi-3-mini-4k-instruct", Request{Prompt: 4000, Gen: 200}, "a context of 4199 tokens"},
		{"phi-3-mini-4k-instruct", Request{Prompt: 4096}, ""},
		{"llama-3.1-8b", Request{Prompt: 1, Ctx: 131072}, ""}, // llama3 rope scaling is in max_position_embeddings
		{"llama-3.1-8b", Request{Prompt: 1, Ctx: 131073}, "beyond the 131072 positions"},
		{"deepseek-v3", Request{Prompt: 1, Ctx: 163840, TP: 8}, ""}, // YaRN: 40 × 4096
	} {
		r, err := builtin(t, tc.model).Serve(tc.q, m)
		if err != nil {
			t.Fatalf("%s %+v: %v", tc.model, tc.q, err)
		}
		got := strings.Join(r.Warnings, "; ")
		if tc.warn == "" && got != "" || !strings.Contains(got, tc.warn) {
			t.Errorf("%s %+v: warnings %q, want %q", tc.model, tc.q, got, tc.warn)
		}
	}
}

// TestMaxPositions: YaRN and dynamic NTK scaling extend the context to
// factor × original_max_position_embeddings, as vLLM derives max_model_len
// (Qwen's instructions add {"type": "yarn", "factor": 4,
// "original_max_position_embeddings": 32768} for 131072 tokens); llama3 and
// linear scaling are already in max_position_embeddings.
func TestMaxPositions(t *testing.T) {
	base := `{"model_type": "qwen2", "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 32768`
	for _, tc := range []struct {
		extra string
		want  int64
	}{
		{``, 32768},
		{`, "rope_scaling": null`, 32768},
		{`, "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}`, 131072},
		{`, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}`, 65536},
		{`, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}`, 32768},
		{`, "rope_scaling": {"rope_type": "linear", "factor": 8.0}`, 32768},
	} {
		c, err := Parse("cfg", []byte(base+tc.extra+"}"))
		if err != nil {
			t.Fatal(err)
		}
		if c.MaxPositions != tc.want {
			t.Errorf("%s: %d positions, want %d", tc.extra, c.MaxPositions, tc.want)
		}
	}
	if _, err := Parse("cfg", []byte(base+`, "rope_scaling": 4}`)); err == nil || !strings.Contains(err.Error(), "rope_scaling") {
		t.Errorf("rope_scaling 4: %v, want an error naming the field", err)
	}
}

// TestServeNoFit: a request that does not fit gets no times, only its
// memory and the smallest TP that fits. Llama-3.1-70B's 70.55 G parameters
// in bf16 are 131.4 GiB: 32.9 GiB per GPU at tp 4, over the L4's 23.75 GiB
// usable (24 GiB less the driver's 1.03%); 16.4 GiB at tp 8.
func TestServeNoFit(t *testing.T) {
	c := builtin(t, "llama-3.1-70b")
	r, err := c.Serve(Request{}, onDevice(t, "l4"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Fits() || r.TTFT != nil || r.TPOT != nil || r.Prefill != nil || r.Decode != nil || r.EndToEnd != 0 || r.SmallestTP != 8 {
		t.Errorf("fits %v, ttft %v, tpot %v, smallest tp %d; want no fit, no times, tp 8", r.Fits(), r.TTFT, r.TPOT, r.SmallestTP)
	}
	r, err = c.Serve(Request{TP: 8, Gen: 16}, onDevice(t, "l4"))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Fits() || r.TTFT == nil || *r.TTFT <= 0 || r.TPOT == nil || *r.TPOT <= 0 || r.EndToEnd <= *r.TTFT {
		t.Errorf("tp 8: fits %v, ttft %v, tpot %v, end to end %g; want times", r.Fits(), r.TTFT, r.TPOT, r.EndToEnd)
	}
	// Beyond one host's GPUs the all-reduces cross the network: a warning.
	r, err = c.Serve(Request{TP: 16}, h100(t))
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(r.Warnings, "; "); !strings.Contains(w, "more than one host's 8 GPUs") {
		t.Errorf("tp 16: warnings %q; want the host's 8 GPUs", w)
	}
}
