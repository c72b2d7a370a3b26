package model

import (
	"strings"
	"testing"
)

// TestResolve: the names people type reach the built-ins: Hugging Face ids
// in any case and as URLs, the instruction-tuned variants of the same
// architecture, unambiguous prefixes; an ambiguous prefix lists its
// candidates and an unknown name the closest.
func TestResolve(t *testing.T) {
	for _, tc := range []struct{ typed, want string }{
		{"llama-3.1-70b", "llama-3.1-70b"},
		{"LLAMA-3.1-70B", "llama-3.1-70b"},
		{"meta-llama/Llama-3.1-70B", "llama-3.1-70b"},
		{"meta-llama/llama-3.1-70b-instruct", "llama-3.1-70b"},
		{"https://huggingface.co/meta-llama/Meta-Llama-3.1-8B-Instruct/", "llama-3.1-8b"},
		{"mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b-v0.1"},
		{"mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b-v0.1"},
		{"mixtral", "mixtral-8x7b-v0.1"},
		{"Mixtral-8x7B", "mixtral-8x7b-v0.1"},
		{"deepseek-v", "deepseek-v3"},
		{"openai/gpt-oss-120b", "gpt-oss-120b"},
		{"glm", "glm-5"},
		{"kimi", "kimi-k2.5"},
		{"MiniMaxAI/MiniMax-M2.5", "minimax-m2.5"},
		{"deepseek-ai/DeepSeek-V3", "deepseek-v3"},
		{"phi-3", "phi-3-mini-4k-instruct"},
		{"Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"},
		{"google/gemma-2-9b-it", "gemma-2-9b"},
	} {
		b, err := Resolve(tc.typed)
		if err != nil || b.Name != tc.want {
			t.Errorf("Resolve(%q) = %q, %v; want %s", tc.typed, b.Name, err, tc.want)
		}
	}
	for _, tc := range []struct{ typed, want string }{
		{"llama", `"llama" names several built-in models: llama-3.2-1b, llama-3.1-8b, llama-3.1-70b`},
		{"qwen3", "qwen3-8b, qwen3-30b-a3b"},
		{"deepseek", "deepseek-v3, deepseek-r1"},
		{"mixtrel", "(closest: mixtral-8x7b-v0.1"},
		{"Qwen/Qwen3-8B-Base", "(closest: qwen3-8b"},
		{"gpt-5", "no built-in model \"gpt-5\" (closest: "},
		{" ", "no model named"},
	} {
		if _, err := Resolve(tc.typed); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resolve(%q): %v; want %q", tc.typed, err, tc.want)
		}
	}
}

// TestBuiltinIDsUnique: no name or id resolves to two built-ins.
func TestBuiltinIDsUnique(t *testing.T) {
	seen := map[string]string{}
	for _, b := range Builtins() {
		for _, id := range b.ids() {
			if prev, ok := seen[id]; ok {
				t.Errorf("%s names both %s and %s", id, prev, b.Name)
			}
			seen[id] = b.Name
		}
	}
}
