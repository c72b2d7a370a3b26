package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
)

// Quantization is what a config's quantization_config says of the weights
// as published.
type Quantization struct {
	// Method is the quant_method (fp8, fbgemm_fp8, awq, gptq,
	// bitsandbytes, compressed-tensors), Bits the weights' bits.
	Method string `json:"method"`
	Bits   int    `json:"bits"`
	// Weights is the weight type gpucalc models it as: fp8 (fp8 GEMMs),
	// int4 (weight-only, dequantized into the activation type), int8
	// (int8 GEMMs), mxfp4; "" for a scheme it does not model.
	Weights WeightType `json:"weights_dtype,omitempty"`
	// ExpertsOnly: only the routed experts are quantized; attention (and
	// the dense and shared MLPs) stay in the activation type, as gpt-oss
	// and Kimi-K2.5 ship them (their lists of modules not converted name
	// the attention layers).
	ExpertsOnly bool `json:"experts_only,omitempty"`
}

func (q Quantization) String() string {
	if q.Bits == 0 {
		return q.Method
	}
	return fmt.Sprintf("%s %d-bit", q.Method, q.Bits)
}

// parseQuantization reads quantization_config: DeepSeek-V3 ships fp8
// weights ({"quant_method": "fp8", "fmt": "e4m3"}), AWQ and GPTQ
// checkpoints 4-bit integers ({"quant_method": "awq", "bits": 4}),
// bitsandbytes {"load_in_4bit": true} (NF4, weight-only) or
// {"load_in_8bit": true} (LLM.int8(): int8 GEMMs), compressed-tensors its
// config_groups' weights ({"num_bits": 8, "type": "float"}), fbgemm_fp8
// fp8. nil when there is none.
func parseQuantization(f fields) (*Quantization, error) {
	if !f.has("quantization_config") {
		return nil, nil
	}
	var qc struct {
		Method string   `json:"quant_method"`
		Fmt    string   `json:"fmt"`
		Bits   int      `json:"bits"`
		Load4  bool     `json:"load_in_4bit"`
		Skip   []string `json:"modules_to_not_convert"`
		Ignore []string `json:"ignore"`
		Load8  bool     `json:"load_in_8bit"`
		Groups map[string]struct {
			Weights struct {
				Bits int    `json:"num_bits"`
				Type string `json:"type"`
			} `json:"weights"`
		} `json:"config_groups"`
	}
	if err := json.Unmarshal(f.m["quantization_config"], &qc); err != nil {
		// Said in the config's words: json's error names Go's types.
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, fmt.Errorf("%s: field \"quantization_config.%s\" is %s; expected %s", f.name, te.Field, jsonKind(te.Value), goKind(te.Type))
		}
		return nil, fmt.Errorf("%s: field \"quantization_config\" is not an object with quant_method (such as {\"quant_method\": \"awq\", \"bits\": 4})", f.name)
	}
	q := &Quantization{Method: strings.ToLower(qc.Method), Bits: qc.Bits}
	for _, m := range append(qc.Skip, qc.Ignore...) {
		q.ExpertsOnly = q.ExpertsOnly || strings.Contains(m, "self_attn")
	}
	switch q.Method {
	case "mxfp4":
		q.Bits, q.Weights = 4, MXFP4
	case "fp8", "fbgemm_fp8":
		q.Bits, q.Weights = 8, WeightType(devices.FP8E4M3)
		if strings.EqualFold(qc.Fmt, "e5m2") {
			q.Weights = WeightType(devices.FP8E5M2)
		}
	case "awq", "gptq":
		if q.Bits == 4 {
			q.Weights = Int4
		}
	case "bitsandbytes":
		switch {
		case qc.Load4:
			q.Bits, q.Weights = 4, Int4
		case qc.Load8:
			q.Bits, q.Weights = 8, WeightType(devices.INT8)
		}
	case "compressed-tensors":
		// One scheme for the linear layers: the first group's weights
		// (group_0 in the checkpoints published).
		keys := slices.Sorted(maps.Keys(qc.Groups))
		if len(keys) == 0 {
			return nil, fmt.Errorf("%s: field \"quantization_config\" (compressed-tensors) has no config_groups", f.name)
		}
		w := qc.Groups[keys[0]].Weights
		q.Bits = w.Bits
		switch {
		case w.Bits == 8 && w.Type == "float":
			q.Weights = WeightType(devices.FP8E4M3)
		case w.Bits == 8 && w.Type == "int":
			q.Weights = WeightType(devices.INT8)
		case w.Bits == 4 && w.Type == "int":
			q.Weights = Int4
		}
	case "":
		return nil, fmt.Errorf("%s: field \"quantization_config\" has no quant_method", f.name)
	}
	return q, nil
}

// jsonKind names a JSON value's kind as json's type errors give it
// ("string", "number", "number 4.5", "object", "array", "bool").
func jsonKind(v string) string {
	switch {
	case v == "object", v == "array":
		return "an " + v
	case v == "bool":
		return "true or false"
	case strings.HasPrefix(v, "number "):
		return "the " + v
	}
	return "a " + v
}

// goKind names what a field of Go type t takes, in JSON's words.
func goKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "a whole number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "an array"
	}
	return "an object"
}

// fill completes a shape with the config's defaults, then Shape's: the
// weight type its quantization_config ships, unless the shape gives one.
func (c Config) fill(s Shape) (Shape, error) {
	if q := c.Quantization; q != nil && s.Weights == "" && s.ExpertWeights == "" {
		if q.Weights == "" {
			return s, fmt.Errorf("%s ships %s weights (quantization_config), which gpucalc does not model; give the weight type (bf16, fp8, int8 or int4)", c.Name, q)
		}
		if q.ExpertsOnly {
			s.ExpertWeights = q.Weights
		} else {
			s.Weights = q.Weights
		}
	}
	return s.Defaults(), nil
}

// FillShape is s with the config's defaults (see fill).
func (c Config) FillShape(s Shape) (Shape, error) { return c.fill(s) }

// FillRequest is q with the config's defaults (the weight type its
// quantization_config ships), then Request's.
func (c Config) FillRequest(q Request) (Request, error) {
	s, err := c.fill(Shape{Weights: q.Weights, ExpertWeights: q.ExpertWeights, Activations: q.Activations})
	if err != nil {
		return q, err
	}
	q.Weights, q.ExpertWeights = s.Weights, s.ExpertWeights
	return q.Defaults(), nil
}
