// Package model turns a Hugging Face config.json of a decoder-only language
// model into what gpucalc reasons about: the exact parameter count, the
// memory one GPU holds (weights, KV cache, activation workspace), and the op
// list of a prefill or decode step that roofline prices like any other
// workload. It knows architectures, not devices' speeds.
package model

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// MaxConfigBytes is the largest config.json read: a model's is a few KiB,
// a classifier's with every label a few hundred.
const MaxConfigBytes = 4 << 20

// Config is the architecture a config.json describes, normalised across
// model types. Sizes are element counts.
type Config struct {
	// Name is the built-in name or the file the config came from.
	Name      string `json:"name"`
	ModelType string `json:"model_type"`

	Hidden       int64 `json:"hidden_size"`
	Layers       int64 `json:"layers"`
	Heads        int64 `json:"heads"`
	KVHeads      int64 `json:"kv_heads"`
	HeadDim      int64 `json:"head_dim"`
	Intermediate int64 `json:"intermediate_size"`
	Vocab        int64 `json:"vocab_size"`

	TiedEmbeddings bool `json:"tied_embeddings"`
	// QKVBias: q, k and v projections carry biases; OBias: the output
	// projection too (attention_bias); MLPBias: gate, up and down.
	QKVBias bool `json:"qkv_bias"`
	OBias   bool `json:"o_bias"`
	MLPBias bool `json:"mlp_bias"`
	// QKNorm: per-head RMSNorm of queries and keys (Qwen3, Gemma 3).
	QKNorm bool `json:"qk_norm"`
	// NormsPerLayer is 2 (pre-attention, pre-MLP) or 4 (Gemma 2 and 3 add
	// post-attention and post-MLP norms).
	NormsPerLayer int64 `json:"norms_per_layer"`
	// FusedQKV and FusedGateUp: one projection computes q, k, v (gate and
	// up) together, as Phi-3 stores them.
	FusedQKV    bool `json:"fused_qkv"`
	FusedGateUp bool `json:"fused_gate_up"`
	// Activation is "silu" or "gelu_tanh", gating the MLP.
	Activation string `json:"activation"`

	// SlidingWindow is the attention window of the layers marked in
	// Sliding (0: none).
	SlidingWindow int64  `json:"sliding_window,omitempty"`
	Sliding       []bool `json:"sliding_layers,omitempty"`

	// Mixture of experts: Experts routed experts of MoEIntermediate each,
	// TopK of them per token, SharedExperts always-on experts; Dense[i]
	// marks layers with a dense MLP of Intermediate instead.
	Experts         int64  `json:"experts,omitempty"`
	TopK            int64  `json:"experts_per_token,omitempty"`
	MoEIntermediate int64  `json:"moe_intermediate_size,omitempty"`
	SharedExperts   int64  `json:"shared_experts,omitempty"`
	Dense           []bool `json:"dense_layers,omitempty"`

	// Multi-head latent attention (DeepSeek-V3): queries through a rank
	// QLoRARank bottleneck (0: a direct projection), keys and values from
	// a KVLoRARank latent cached with a QKRopeDim rotary key; per head
	// QKNopeDim + QKRopeDim query/key and VHeadDim value dimensions.
	QLoRARank  int64 `json:"q_lora_rank,omitempty"`
	KVLoRARank int64 `json:"kv_lora_rank,omitempty"`
	QKNopeDim  int64 `json:"qk_nope_head_dim,omitempty"`
	QKRopeDim  int64 `json:"qk_rope_head_dim,omitempty"`
	VHeadDim   int64 `json:"v_head_dim,omitempty"`

	// Sinks: each attention head has a learned sink logit in its softmax
	// (gpt-oss). RouterBias: the router's linear layer has a bias.
	Sinks      bool `json:"attention_sinks,omitempty"`
	RouterBias bool `json:"router_bias,omitempty"`
	// QKNormFull: the q and k norms span all heads of the projection
	// (MiniMax-M2's per-layer norms) rather than one head.
	QKNormFull bool `json:"qk_norm_full,omitempty"`
	// AttnGate: the query projection also computes a sigmoid gate on the
	// attention output (Qwen3.5's attn_output_gate), doubling its width.
	AttnGate bool `json:"attention_output_gate,omitempty"`
	// SharedIntermediate is the shared expert's width when the config
	// gives it apart (Qwen3.5); SharedGate: the shared expert's output
	// goes through a one-unit sigmoid gate.
	SharedIntermediate int64 `json:"shared_expert_intermediate_size,omitempty"`
	SharedGate         bool  `json:"shared_expert_gate,omitempty"`

	// DeepSeek sparse attention (GLM-5): an indexer of IndexHeads heads of
	// IndexHeadDim scores every cached token and each query attends to the
	// IndexTopK best.
	IndexHeads   int64 `json:"index_heads,omitempty"`
	IndexHeadDim int64 `json:"index_head_dim,omitempty"`
	IndexTopK    int64 `json:"index_topk,omitempty"`

	// Gated delta-net linear attention (Qwen3.5) in the layers Linear
	// marks: LinearKeyHeads key and LinearValueHeads value heads of
	// LinearKeyDim and LinearValueDim, a depthwise causal convolution of
	// LinearConv taps; the recurrent state is kept in fp32.
	Linear           []bool `json:"linear_attention_layers,omitempty"`
	LinearKeyHeads   int64  `json:"linear_key_heads,omitempty"`
	LinearValueHeads int64  `json:"linear_value_heads,omitempty"`
	LinearKeyDim     int64  `json:"linear_key_head_dim,omitempty"`
	LinearValueDim   int64  `json:"linear_value_head_dim,omitempty"`
	LinearConv       int64  `json:"linear_conv_kernel,omitempty"`

	// TextConfig names the text model a multimodal config holds, whose
	// language model is what gpucalc answers for ("" for a text config).
	TextConfig string `json:"text_config,omitempty"`

	// MaxPositions is the longest sequence the model supports (see
	// maxPositions); 0 when the config does not say.
	MaxPositions int64 `json:"max_positions,omitempty"`
	// Quantization is the config's quantization_config, whose weight type
	// is the default of a shape's (nil: none).
	Quantization *Quantization `json:"quantization,omitempty"`
}

// ModelTypes are the model_type values Parse knows.
var ModelTypes = []string{"llama", "mistral", "qwen2", "qwen3", "phi3", "gemma2", "gemma3_text", "mixtral", "qwen3_moe", "deepseek_v3",
	"gpt_oss", "minimax_m2", "kimi_k25", "glm_moe_dsa", "qwen3_5_moe"}

// textTypes maps the model_type of a multimodal config, and of the text
// config inside it, to the architecture gpucalc parses it as: Kimi-K2 is
// DeepSeek-V3's text model (its config names DeepseekV3ForCausalLM);
// Qwen3.5's text model is qwen3_5_moe_text.
var textTypes = map[string]string{"kimi_k2": "deepseek_v3", "kimi_k25": "deepseek_v3", "qwen3_5_moe_text": "qwen3_5_moe"}

// Linear reports whether layer i is a linear-attention (gated delta-net)
// layer.
func (c Config) LinearAttention(i int) bool { return len(c.Linear) > i && c.Linear[i] }

// DSA reports whether attention selects its keys with an indexer
// (DeepSeek sparse attention).
func (c Config) DSA() bool { return c.IndexTopK > 0 }

// sharedWidth is the shared experts' MLP width.
func (c Config) sharedWidth() int64 {
	if c.SharedIntermediate > 0 {
		return c.SharedIntermediate
	}
	return c.SharedExperts * c.MoEIntermediate
}

// MLA reports whether the model uses multi-head latent attention.
func (c Config) MLA() bool { return c.KVLoRARank > 0 }

// MoE reports whether layer i routes its MLP through experts.
func (c Config) MoE(i int) bool { return c.Experts > 0 && !c.Dense[i] }

// maxSize bounds every size so that counts stay exact and layer lists small.
const maxSize = 1 << 24

// MaxLayers is the most layers a config may have: ten times the deepest
// published LLM (Llama-3.1-405B has 126), so that per-layer lists and loops
// stay small on every device.
const MaxLayers = 1024

// fields reads config.json values with errors that name the field.
type fields struct {
	m    map[string]json.RawMessage
	name string
}

func (f fields) has(k string) bool {
	v, ok := f.m[k]
	return ok && string(v) != "null"
}

func (f fields) int(k string) (int64, error) {
	if !f.has(k) {
		return 0, fmt.Errorf("%s: missing field %q", f.name, k)
	}
	var v float64
	if err := json.Unmarshal(f.m[k], &v); err != nil || v != float64(int64(v)) || v <= 0 || v > maxSize {
		return 0, fmt.Errorf("%s: field %q is %s; expected a whole number from 1 to %d", f.name, k, f.m[k], int64(maxSize))
	}
	return int64(v), nil
}

// intOr returns the field, or def when it is absent or null.
func (f fields) intOr(k string, def int64) (int64, error) {
	if !f.has(k) {
		return def, nil
	}
	return f.int(k)
}

func (f fields) boolOr(k string, def bool) (bool, error) {
	if !f.has(k) {
		return def, nil
	}
	var v bool
	if err := json.Unmarshal(f.m[k], &v); err != nil {
		return false, fmt.Errorf("%s: field %q is %s; expected true or false", f.name, k, f.m[k])
	}
	return v, nil
}

func (f fields) str(k string) (string, error) {
	var s string
	if !f.has(k) {
		return "", nil
	}
	if err := json.Unmarshal(f.m[k], &s); err != nil {
		return "", fmt.Errorf("%s: field %q is %s; expected a string", f.name, k, f.m[k])
	}
	return s, nil
}

// Parse reads a Hugging Face config.json; name labels the config in errors
// and output. A missing required field or an unknown model_type is an error
// naming it.
func Parse(name string, data []byte) (Config, error) {
	var m map[string]json.RawMessage
	// Editors on Windows save a byte-order mark; JSON has none to give.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil {
		return Config{}, fmt.Errorf("%s: not a JSON object: %w", name, err)
	}
	// One object and nothing after it: trailing data is a broken or
	// concatenated file, whose second half would be ignored.
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		return Config{}, fmt.Errorf("%s: data after the JSON object, which ends at byte %d; a config.json holds one object", name, end)
	}
	f := fields{m: m, name: name}
	mt, err := f.str("model_type")
	if err != nil {
		return Config{}, err
	}
	if mt == "" {
		return Config{}, fmt.Errorf("%s: missing field \"model_type\"; expected one of %s", name, strings.Join(ModelTypes, ", "))
	}
	_, known := textTypes[mt] // kimi_k2: Kimi-K2's own text config
	for _, t := range ModelTypes {
		known = known || t == mt
	}
	if !known {
		return Config{}, fmt.Errorf("%s: model_type %q is not supported; expected one of %s", name, mt, strings.Join(ModelTypes, ", "))
	}
	c := Config{Name: name, ModelType: mt, NormsPerLayer: 2, Activation: "silu"}
	// A multimodal config answers for its language model: the text_config
	// inside it (the vision tower is left out).
	if _, ok := m["text_config"]; ok && !f.has("num_hidden_layers") {
		var inner map[string]json.RawMessage
		if err := json.Unmarshal(m["text_config"], &inner); err != nil {
			return Config{}, fmt.Errorf("%s: field \"text_config\" is not an object", name)
		}
		f = fields{m: inner, name: name + " text_config"}
		if c.TextConfig, err = f.str("model_type"); err != nil {
			return Config{}, err
		}
		if _, ok := textTypes[c.TextConfig]; !ok {
			return Config{}, fmt.Errorf("%s: text_config of model_type %q is not supported; expected kimi_k2 or qwen3_5_moe_text", name, c.TextConfig)
		}
		if !f.has("tie_word_embeddings") && m["tie_word_embeddings"] != nil {
			inner["tie_word_embeddings"] = m["tie_word_embeddings"]
		}
	}
	// arch is the architecture the config is parsed as.
	arch := mt
	if t, ok := textTypes[mt]; ok {
		arch = t
	}
	for _, x := range []struct {
		k   string
		dst *int64
	}{
		{"hidden_size", &c.Hidden}, {"num_hidden_layers", &c.Layers}, {"num_attention_heads", &c.Heads},
		{"vocab_size", &c.Vocab},
	} {
		if *x.dst, err = f.int(x.k); err != nil {
			return Config{}, err
		}
	}
	// Qwen3.5 has no dense MLP and no intermediate_size: its experts'
	// width stands in where a dense width is asked for.
	if arch == "qwen3_5_moe" && !f.has("intermediate_size") {
		c.Intermediate, err = f.int("moe_intermediate_size")
	} else {
		c.Intermediate, err = f.int("intermediate_size")
	}
	if err != nil {
		return Config{}, err
	}
	if c.KVHeads, err = f.intOr("num_key_value_heads", c.Heads); err != nil {
		return Config{}, err
	}
	if c.HeadDim, err = f.intOr("head_dim", c.Hidden/c.Heads); err != nil {
		return Config{}, err
	}
	if c.MaxPositions, err = maxPositions(f); err != nil {
		return Config{}, err
	}
	if c.Quantization, err = parseQuantization(f); err != nil {
		return Config{}, err
	}
	if c.HeadDim == 0 { // hidden_size / num_attention_heads, rounded down
		return Config{}, fmt.Errorf("%s: hidden_size=%d is smaller than num_attention_heads=%d, so head_dim would be 0; give head_dim", name, c.Hidden, c.Heads)
	}
	if c.Layers > MaxLayers {
		return Config{}, fmt.Errorf("%s: num_hidden_layers=%d is more than %d; no published model has a tenth of that", name, c.Layers, MaxLayers)
	}
	if c.Heads%c.KVHeads != 0 {
		return Config{}, fmt.Errorf("%s: num_attention_heads=%d is not a multiple of num_key_value_heads=%d", name, c.Heads, c.KVHeads)
	}
	// Defaults are those of each model's transformers config class.
	tieDefault := arch == "gemma2" || arch == "gemma3_text"
	if c.TiedEmbeddings, err = f.boolOr("tie_word_embeddings", tieDefault); err != nil {
		return Config{}, err
	}
	attnBias, err := f.boolOr("attention_bias", false)
	if err != nil {
		return Config{}, err
	}
	c.QKVBias, c.OBias = attnBias, attnBias
	if c.MLPBias, err = f.boolOr("mlp_bias", false); err != nil {
		return Config{}, err
	}
	c.Sliding = make([]bool, c.Layers)
	c.Dense = make([]bool, c.Layers)
	window := func(k string) error {
		w, err := f.intOr(k, 0)
		c.SlidingWindow = w
		return err
	}
	all := func(v bool) {
		for i := range c.Sliding {
			c.Sliding[i] = v
		}
	}
	switch arch {
	case "llama", "deepseek_v3", "glm_moe_dsa":
	case "gpt_oss":
		// Every layer's q, k, v and o carry biases (attention_bias), each
		// head a sink logit; the router and the experts carry biases;
		// layer_types says which layers slide.
		c.Sinks, c.RouterBias, c.MLPBias = true, true, true
		if err := window("sliding_window"); err != nil {
			return Config{}, err
		}
	case "minimax_m2":
		// use_qk_norm with qk_norm_type per_layer: one RMSNorm over all
		// query heads and one over all key heads.
		qk, err := f.boolOr("use_qk_norm", true)
		if err != nil {
			return Config{}, err
		}
		c.QKNorm, c.QKNormFull = qk, qk
	case "mistral", "mixtral", "phi3":
		if err := window("sliding_window"); err != nil {
			return Config{}, err
		}
		all(c.SlidingWindow > 0)
		if arch == "phi3" {
			c.FusedQKV, c.FusedGateUp = true, true
		}
	case "qwen2", "qwen3", "qwen3_moe":
		c.QKVBias = c.QKVBias || arch == "qwen2"
		c.QKNorm = arch != "qwen2"
		use, err := f.boolOr("use_sliding_window", false)
		if err != nil {
			return Config{}, err
		}
		if use {
			if err := window("sliding_window"); err != nil {
				return Config{}, err
			}
			first, err := f.intOr("max_window_layers", c.Layers)
			if err != nil {
				return Config{}, err
			}
			for i := range c.Sliding {
				c.Sliding[i] = int64(i) >= first
			}
		}
	case "gemma2", "gemma3_text":
		c.NormsPerLayer, c.Activation = 4, "gelu_tanh"
		c.QKNorm = arch == "gemma3_text"
		if err := window("sliding_window"); err != nil {
			return Config{}, err
		}
		// transformers: Gemma 2 alternates sliding and full layers;
		// Gemma 3 has one full layer in every sliding_window_pattern.
		pattern := int64(2)
		if arch == "gemma3_text" {
			if pattern, err = f.intOr("sliding_window_pattern", 6); err != nil {
				return Config{}, err
			}
		}
		for i := range c.Sliding {
			c.Sliding[i] = c.SlidingWindow > 0 && (int64(i)+1)%pattern != 0
		}
	}
	if f.has("layer_types") {
		var lt []string
		if err := json.Unmarshal(f.m["layer_types"], &lt); err != nil || int64(len(lt)) != c.Layers {
			return Config{}, fmt.Errorf("%s: field \"layer_types\" must list %d layer types", name, c.Layers)
		}
		for i, t := range lt {
			c.Sliding[i] = t == "sliding_attention" && c.SlidingWindow > 0
			if arch == "qwen3_5_moe" && t == "linear_attention" {
				if c.Linear == nil {
					c.Linear = make([]bool, c.Layers)
				}
				c.Linear[i] = true
			}
		}
	}
	if err := parseMoE(f, arch, &c); err != nil {
		return Config{}, err
	}
	if _, n := c.params(); n > MaxParams {
		return Config{}, fmt.Errorf("%s: the config describes %.3g parameters, more than the %.0e gpucalc counts exactly; check its sizes", name, n, float64(MaxParams))
	}
	return c, nil
}

// maxPositions is the longest sequence a config allows, as vLLM derives
// max_model_len: max_position_embeddings, which llama3, longrope and linear
// rope scaling already state; YaRN and dynamic NTK scaling extend it to
// factor x original_max_position_embeddings (else x max_position_embeddings),
// as Qwen's instructions for long contexts add it to config.json.
func maxPositions(f fields) (int64, error) {
	n, err := f.intOr("max_position_embeddings", 0)
	if err != nil || !f.has("rope_scaling") {
		return n, err
	}
	var rs struct {
		Type     string  `json:"type"`
		RopeType string  `json:"rope_type"`
		Factor   float64 `json:"factor"`
		Original int64   `json:"original_max_position_embeddings"`
	}
	if err := json.Unmarshal(f.m["rope_scaling"], &rs); err != nil {
		return 0, fmt.Errorf("%s: field \"rope_scaling\" is %s; expected an object with rope_type and factor", f.name, f.m["rope_scaling"])
	}
	if t := cmp.Or(rs.RopeType, rs.Type); (t == "yarn" || t == "dynamic") && rs.Factor > 1 && rs.Factor < maxSize {
		n = max(n, int64(rs.Factor*float64(cmp.Or(rs.Original, n))))
	}
	return n, nil
}

// parseMoE reads the expert and latent-attention fields of the MoE types.
func parseMoE(f fields, arch string, c *Config) error {
	var err error
	switch arch {
	case "mixtral", "gpt_oss", "minimax_m2":
		if c.Experts, err = f.int("num_local_experts"); err != nil {
			return err
		}
		if c.TopK, err = f.int("num_experts_per_tok"); err != nil {
			return err
		}
		c.MoEIntermediate = c.Intermediate
	case "qwen3_moe", "qwen3_5_moe":
		for _, x := range []struct {
			k   string
			dst *int64
		}{{"num_experts", &c.Experts}, {"num_experts_per_tok", &c.TopK}, {"moe_intermediate_size", &c.MoEIntermediate}} {
			if *x.dst, err = f.int(x.k); err != nil {
				return err
			}
		}
		step, err := f.intOr("decoder_sparse_step", 1)
		if err != nil {
			return err
		}
		var only []int64
		if f.has("mlp_only_layers") {
			if err := json.Unmarshal(f.m["mlp_only_layers"], &only); err != nil {
				return fmt.Errorf("%s: field \"mlp_only_layers\" must be a list of layer indexes", f.name)
			}
		}
		for i := range c.Dense {
			c.Dense[i] = (int64(i)+1)%step != 0
		}
		for _, i := range only {
			if i < 0 || i >= c.Layers {
				return fmt.Errorf("%s: field \"mlp_only_layers\" names layer %d of %d", f.name, i, c.Layers)
			}
			c.Dense[i] = true
		}
	case "deepseek_v3", "glm_moe_dsa":
		for _, x := range []struct {
			k   string
			dst *int64
		}{
			{"n_routed_experts", &c.Experts}, {"num_experts_per_tok", &c.TopK}, {"moe_intermediate_size", &c.MoEIntermediate},
			{"kv_lora_rank", &c.KVLoRARank}, {"qk_nope_head_dim", &c.QKNopeDim}, {"qk_rope_head_dim", &c.QKRopeDim}, {"v_head_dim", &c.VHeadDim},
		} {
			if *x.dst, err = f.int(x.k); err != nil {
				return err
			}
		}
		if c.SharedExperts, err = f.intOr("n_shared_experts", 0); err != nil {
			return err
		}
		if c.QLoRARank, err = f.intOr("q_lora_rank", 0); err != nil {
			return err
		}
		firstDense, err := f.intOr("first_k_dense_replace", 0)
		if err != nil {
			return err
		}
		// transformers' DeepseekV3 routes every layer from
		// first_k_dense_replace on (moe_layer_freq is not read).
		for i := range c.Dense {
			c.Dense[i] = int64(i) < firstDense
		}
		c.HeadDim = c.QKNopeDim + c.QKRopeDim
		c.KVHeads = c.Heads
		if arch == "glm_moe_dsa" {
			for _, x := range []struct {
				k   string
				dst *int64
			}{{"index_n_heads", &c.IndexHeads}, {"index_head_dim", &c.IndexHeadDim}, {"index_topk", &c.IndexTopK}} {
				if *x.dst, err = f.int(x.k); err != nil {
					return err
				}
			}
		}
	}
	if arch == "qwen3_5_moe" {
		if err := parseLinear(f, c); err != nil {
			return err
		}
	}
	if c.Experts > 0 && c.TopK > c.Experts {
		return fmt.Errorf("%s: num_experts_per_tok=%d is more than the %d experts", f.name, c.TopK, c.Experts)
	}
	return nil
}

// parseLinear reads Qwen3.5's hybrid layers: gated delta-net linear
// attention where layer_types says linear_attention, gated full attention
// (per-head q and k norms, attn_output_gate) elsewhere, and a gated shared
// expert beside the routed ones.
func parseLinear(f fields, c *Config) error {
	var err error
	if c.Linear == nil {
		return fmt.Errorf("%s: field \"layer_types\" is missing; it says which layers are linear_attention", f.name)
	}
	for _, x := range []struct {
		k   string
		dst *int64
	}{
		{"linear_num_key_heads", &c.LinearKeyHeads}, {"linear_num_value_heads", &c.LinearValueHeads},
		{"linear_key_head_dim", &c.LinearKeyDim}, {"linear_value_head_dim", &c.LinearValueDim},
		{"linear_conv_kernel_dim", &c.LinearConv}, {"shared_expert_intermediate_size", &c.SharedIntermediate},
	} {
		if *x.dst, err = f.int(x.k); err != nil {
			return err
		}
	}
	if c.LinearValueHeads%c.LinearKeyHeads != 0 {
		return fmt.Errorf("%s: linear_num_value_heads=%d is not a multiple of linear_num_key_heads=%d", f.name, c.LinearValueHeads, c.LinearKeyHeads)
	}
	if c.AttnGate, err = f.boolOr("attn_output_gate", true); err != nil {
		return err
	}
	c.QKNorm, c.SharedExperts, c.SharedGate = true, 1, true
	return nil
}
