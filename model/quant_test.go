package model

import (
	"strings"
	"testing"
)

// TestQuantization: quantization_config sets the weight type a shape
// defaults to, for the schemes checkpoints are published in.
func TestQuantization(t *testing.T) {
	base := `{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 128, "vocab_size": 100`
	for _, tc := range []struct {
		qc   string
		want WeightType
	}{
		{`{"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]}`, "fp8_e4m3"}, // DeepSeek-V3
		{`{"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0}`, "fp8_e4m3"},
		{`{"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true, "version": "gemm"}`, Int4},
		{`{"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": false}`, Int4},
		{`{"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "nf4"}`, Int4},
		{`{"quant_method": "bitsandbytes", "load_in_8bit": true}`, "int8"},
		{`{"quant_method": "compressed-tensors", "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}}`, "fp8_e4m3"},
		{`{"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "group_size": 128}}}}`, Int4},
	} {
		c, err := Parse("cfg", []byte(base+`, "quantization_config": `+tc.qc+"}"))
		if err != nil {
			t.Fatalf("%s: %v", tc.qc, err)
		}
		s, err := c.FillShape(Shape{Phase: Decode})
		if err != nil || s.Weights != tc.want {
			t.Errorf("%s: weights %s, %v; want %s", tc.qc, s.Weights, err, tc.want)
		}
		// A weight type given wins.
		if s, _ := c.FillShape(Shape{Phase: Decode, Weights: "bf16"}); s.Weights != "bf16" {
			t.Errorf("%s: a given bf16 became %s", tc.qc, s.Weights)
		}
	}
	// DeepSeek-V3's built-in config: fp8 weights by default.
	q, err := builtin(t, "deepseek-v3").FillRequest(Request{})
	if err != nil || q.Weights != "fp8_e4m3" || q.Activations != "bf16" {
		t.Errorf("deepseek-v3: %+v, %v; want fp8_e4m3 weights, bf16 activations", q, err)
	}
	// A scheme gpucalc does not model is an error unless the weights are given.
	c, err := Parse("cfg", []byte(base+`, "quantization_config": {"quant_method": "gptq", "bits": 8}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.FillShape(Shape{Phase: Decode}); err == nil || !strings.Contains(err.Error(), "gptq 8-bit") {
		t.Errorf("gptq 8-bit: %v; want an error naming it", err)
	}
	if s, err := c.FillShape(Shape{Phase: Decode, Weights: Int4}); err != nil || s.Weights != Int4 {
		t.Errorf("gptq 8-bit with int4 given: %s, %v", s.Weights, err)
	}
	if _, err := Parse("cfg", []byte(base+`, "quantization_config": {"bits": 4}}`)); err == nil {
		t.Error("a quantization_config without quant_method parses")
	}
	// A malformed quantization_config is said in the config's words; it
	// printed Go's struct description ("Go struct field .quant_method of
	// type string").
	for qc, want := range map[string]string{
		`{"quant_method": 4}`:                          `cfg: field "quantization_config.quant_method" is a number; expected a string`,
		`{"quant_method": "awq", "bits": "4"}`:         `cfg: field "quantization_config.bits" is a string; expected a whole number`,
		`{"quant_method": "awq", "bits": 4.5}`:         `cfg: field "quantization_config.bits" is the number 4.5; expected a whole number`,
		`{"quant_method": "awq", "load_in_4bit": "y"}`: `cfg: field "quantization_config.load_in_4bit" is a string; expected true or false`,
		`"awq"`: `cfg: field "quantization_config" is not an object with quant_method`,
	} {
		_, err := Parse("cfg", []byte(base+`, "quantization_config": `+qc+"}"))
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "Go ") {
			t.Errorf("%s: %v; want %q", qc, err, want)
		}
	}
}
