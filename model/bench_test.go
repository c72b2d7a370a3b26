package model

import "testing"

// One `gpucalc model` answer (prefill, decode, memory, smallest TP) must cost
// at most 10 ms of CPU.
func BenchmarkServe(b *testing.B) {
	c := builtin(b, "llama-3.1-70b")
	m := h100(b)
	q := Request{Batch: 32, Ctx: 8192, TP: 4, Gen: 256}
	for b.Loop() {
		if _, err := c.Serve(q, m); err != nil {
			b.Fatal(err)
		}
	}
}

// DeepSeek-V3 has the most op groups (dense and MoE layers, MLA).
func BenchmarkServeDeepSeek(b *testing.B) {
	c := builtin(b, "deepseek-v3")
	m := h100(b)
	for b.Loop() {
		if _, err := c.Serve(Request{Batch: 8, TP: 8}, m); err != nil {
			b.Fatal(err)
		}
	}
}
