package model

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/internal/testfile"
)

// testdata/hf_params.csv holds the parameter counts Hugging Face transformers
// 5.17.0 builds for every built-in config: AutoModelForCausalLM.from_config
// on the meta device, sum(p.numel() for p in model.parameters()), run on the
// GPU machine with tools/hfparams/hfparams.py.
func TestParamsMatchHuggingFace(t *testing.T) {
	rows, _ := testfile.CSV(t, "testdata/hf_params.csv")
	seen := map[string]bool{}
	for _, r := range rows {
		name, want := r[0], r[2]
		seen[name] = true
		c, err := LoadBuiltin(name)
		if err != nil {
			t.Fatal(err)
		}
		if c.ModelType != r[1] {
			t.Errorf("%s: model_type %s, transformers built %s", name, c.ModelType, r[1])
		}
		if got := strconv.FormatInt(c.Params().Total, 10); got != want {
			t.Errorf("%s: %s parameters, Hugging Face counts %s", name, got, want)
		}
	}
	for _, b := range Builtins() {
		if !seen[b.Name] {
			t.Errorf("built-in %s has no Hugging Face count in testdata/hf_params.csv", b.Name)
		}
	}
}

func TestSharedConfigsExact(t *testing.T) {
	for name, want := range map[string]int64{"llama-3.1-8b": 8_030_261_248, "llama-3.2-1b": 1_235_814_400} {
		c, err := LoadBuiltin(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Params().Total; got != want {
			t.Errorf("%s: %d parameters, want %d", name, got, want)
		}
	}
}

func TestEveryArchitectureBuiltin(t *testing.T) {
	have := map[string]bool{}
	for _, b := range Builtins() {
		c, err := LoadBuiltin(b.Name)
		if err != nil {
			t.Fatal(err)
		}
		have[c.ModelType] = true
	}
	for _, mt := range ModelTypes {
		if !have[mt] {
			t.Errorf("no built-in config of model_type %s", mt)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ json, want string }{
		{`{"model_type": "gpt2"}`, `model_type "gpt2" is not supported`},
		{`{"hidden_size": 8}`, `missing field "model_type"`},
		{`{"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10}`, `missing field "intermediate_size"`},
		{`{"model_type": "llama", "hidden_size": 8.5, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10, "intermediate_size": 4}`, `field "hidden_size" is 8.5`},
		{`{"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 3, "vocab_size": 10, "intermediate_size": 4}`, `not a multiple`},
		{`{"model_type": "mixtral", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10, "intermediate_size": 4, "num_experts_per_tok": 2}`, `missing field "num_local_experts"`},
		{`{"model_type": "deepseek_v3", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10, "intermediate_size": 4, "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 2}`, `missing field "kv_lora_rank"`},
		{`[1]`, `not a JSON object`},
		// Trailing data after the object was ignored.
		{`{"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10, "intermediate_size": 4} garbage`, `data after the JSON object, which ends at byte 133`},
		{`{"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10, "intermediate_size": 4}{}`, `data after the JSON object`},
		// Shapes the model types forbid: head_dim 0 (hidden smaller than
		// the heads), layers beyond any model (a 134-byte config of 2^24
		// layers took 12 s per device).
		{`{"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 16, "vocab_size": 10, "intermediate_size": 4}`, `hidden_size=8 is smaller than num_attention_heads=16, so head_dim would be 0`},
		{`{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 16777216, "num_attention_heads": 2, "vocab_size": 100, "intermediate_size": 128}`, `num_hidden_layers=16777216 is more than 1024`},
		// Counts that would wrap int64 (2^24 experts of 2^24 × 2^24 MLPs
		// over 64 layers: 9.07e23 parameters, once counted as negative).
		{`{"model_type": "qwen3_moe", "hidden_size": 16777216, "num_hidden_layers": 64, "num_attention_heads": 64, "vocab_size": 100, "intermediate_size": 128,
		  "num_experts": 16777216, "num_experts_per_tok": 8, "moe_intermediate_size": 16777216}`, `describes 9.07e+23 parameters, more than the 1e+15`},
	} {
		_, err := Parse("cfg.json", []byte(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "cfg.json") {
			t.Errorf("%s: error %v, want one containing %q", tc.json, err, tc.want)
		}
	}
	if _, err := LoadBuiltin("llama-9"); err == nil || !strings.Contains(err.Error(), "llama-3.1-8b") {
		t.Errorf("unknown built-in: %v", err)
	}
}

// Sliding windows follow transformers: Gemma 2 alternates, Gemma 3 keeps one
// full layer in six, Mistral v0.1 windows every layer, Qwen3 none.
func TestSlidingLayers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		window  int64
		sliding int
	}{{"gemma-2-9b", 4096, 21}, {"gemma-3-1b-it", 512, 22}, {"mistral-7b-v0.1", 4096, 32}, {"qwen3-8b", 0, 0}, {"llama-3.1-8b", 0, 0}} {
		c, err := LoadBuiltin(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range c.Sliding {
			if s {
				n++
			}
		}
		if c.SlidingWindow != tc.window || n != tc.sliding {
			t.Errorf("%s: window %d on %d layers, want %d on %d", tc.name, c.SlidingWindow, n, tc.window, tc.sliding)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, b := range Builtins() {
		data, _ := configFS.ReadFile("configs/" + b.Name + ".json")
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.json", data)
		if err == nil {
			_ = c.Params()
		}
	})
}

// TestParseBOM: a config saved with a byte-order mark reads as without
// one (it failed on "invalid character 'ï'"); whitespace after the object
// is fine.
func TestParseBOM(t *testing.T) {
	c, err := Parse("bom.json", []byte("\ufeff"+`{"model_type": "llama", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10, "intermediate_size": 4}`+"\r\n\n"))
	if err != nil || c.Hidden != 8 || c.Layers != 2 {
		t.Errorf("config with a BOM: %+v, %v", c, err)
	}
}

// TestCountsNeverWrap: counts stay exact up to MaxParams and the shapes
// that would overflow an activation's element count are refused. A config
// of 2^20 hidden, 2^20 intermediate and one layer has 3·2^40 + 4·2^40 +
// 2·100·2^20 + 3·2^20 parameters (MLP, attention with one head of 2^20,
// embedding and head, norms), exactly; a batch of 2^20 prompts of 2^24
// tokens at that width is 2^64 elements, refused.
func TestCountsNeverWrap(t *testing.T) {
	c, err := Parse("wide.json", []byte(`{"model_type": "llama", "hidden_size": 1048576, "num_hidden_layers": 1, "num_attention_heads": 1, "vocab_size": 100, "intermediate_size": 1048576}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Params().Total, int64(7<<40+200<<20+3<<20); got != want {
		t.Errorf("params %d, want %d", got, want)
	}
	_, err = c.Memory(Shape{Phase: Prefill, Batch: 1 << 20, Seq: 1 << 24}, devices.Device{})
	if err == nil || !strings.Contains(err.Error(), "beyond the 9e+15 gpucalc counts exactly") {
		t.Errorf("2^64 elements: %v; want refused", err)
	}
}
