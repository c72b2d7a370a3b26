package model

import (
	"embed"
	"fmt"
	"strings"

	"github.com/gpucalc/gpucalc/names"
)

//go:embed configs/*.json
var configFS embed.FS

// Builtin is a popular model whose config.json ships with gpucalc.
type Builtin struct {
	Name string `json:"name"`
	// ID is the Hugging Face repository the config.json was published in;
	// Also are repositories whose config.json describes the same
	// architecture (the instruction-tuned variants, which differ only in
	// token ids), so that their ids resolve to this config too.
	ID   string   `json:"hf_id"`
	Also []string `json:"same_architecture,omitempty"`
	// Source is where the copy here was taken from.
	Source string `json:"source"`
}

// builtins names every file under configs/ and its source. The files are
// byte-for-byte copies of the published config.json (Hugging Face hub),
// taken from the repositories named, which vendor them.
var builtins = []Builtin{
	{"llama-3.2-1b", "meta-llama/Llama-3.2-1B", []string{"meta-llama/Llama-3.2-1B-Instruct"}, "huggingface.co/meta-llama/Llama-3.2-1B config.json"},
	{"llama-3.1-8b", "meta-llama/Llama-3.1-8B", []string{"meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3.1-8B", "meta-llama/Meta-Llama-3.1-8B-Instruct"}, "huggingface.co/meta-llama/Llama-3.1-8B config.json"},
	{"llama-3.1-70b", "meta-llama/Llama-3.1-70B", []string{"meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Meta-Llama-3.1-70B", "meta-llama/Meta-Llama-3.1-70B-Instruct"}, "huggingface.co/meta-llama/Llama-3.1-70B config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/meta-llama--Meta-Llama-3.1-70B_config.json)"},
	{"mistral-7b-v0.1", "mistralai/Mistral-7B-v0.1", []string{"mistralai/Mistral-7B-Instruct-v0.1"}, "huggingface.co/mistralai/Mistral-7B-v0.1 config.json (transformers 4.34.0.dev0 revision), as quoted in several public repositories"},
	{"qwen2-7b-instruct", "Qwen/Qwen2-7B-Instruct", nil, "huggingface.co/Qwen/Qwen2-7B-Instruct config.json, as vendored in github.com/ThanatosShinji/onnx-tool (onnx_tool/llm.py)"},
	{"qwen3-8b", "Qwen/Qwen3-8B", nil, "huggingface.co/Qwen/Qwen3-8B config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/Qwen--Qwen3-8B_config.json)"},
	{"phi-3-mini-4k-instruct", "microsoft/Phi-3-mini-4k-instruct", nil, "huggingface.co/microsoft/Phi-3-mini-4k-instruct config.json, as vendored in github.com/ThanatosShinji/onnx-tool (onnx_tool/llm.py)"},
	{"gemma-2-9b", "google/gemma-2-9b", []string{"google/gemma-2-9b-it"}, "huggingface.co/google/gemma-2-9b config.json (transformers 4.42.0.dev0 revision), as quoted in public repositories"},
	{"gemma-3-1b-it", "google/gemma-3-1b-it", nil, "huggingface.co/google/gemma-3-1b-it config.json (transformers 4.52.4 revision), as quoted in public repositories"},
	{"mixtral-8x7b-v0.1", "mistralai/Mixtral-8x7B-v0.1", []string{"mistralai/Mixtral-8x7B-Instruct-v0.1"}, "huggingface.co/mistralai/Mixtral-8x7B-v0.1 config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/mistralai--Mixtral-8x7B-v0.1_config.json)"},
	{"qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B", nil, "huggingface.co/Qwen/Qwen3-30B-A3B config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/Qwen--Qwen3-30B-A3B_config.json)"},
	{"deepseek-v3", "deepseek-ai/DeepSeek-V3", nil, "huggingface.co/deepseek-ai/DeepSeek-V3 config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/deepseek-ai--DeepSeek-V3_config.json)"},
	{"deepseek-r1", "deepseek-ai/DeepSeek-R1", nil, "huggingface.co/deepseek-ai/DeepSeek-R1 config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/deepseek-ai--DeepSeek-R1_config.json)"},
	{"kimi-k2.5", "moonshotai/Kimi-K2.5", nil, "huggingface.co/moonshotai/Kimi-K2.5 config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/moonshotai--Kimi-K2.5_config.json)"},
	{"glm-5", "zai-org/GLM-5", nil, "huggingface.co/zai-org/GLM-5 config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/zai-org--GLM-5_config.json)"},
	{"gpt-oss-120b", "openai/gpt-oss-120b", nil, "huggingface.co/openai/gpt-oss-120b config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/openai--gpt-oss-120b_config.json)"},
	{"gpt-oss-20b", "openai/gpt-oss-20b", nil, "huggingface.co/openai/gpt-oss-20b config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/openai--gpt-oss-20b_config.json)"},
	{"minimax-m2.5", "MiniMaxAI/MiniMax-M2.5", nil, "huggingface.co/MiniMaxAI/MiniMax-M2.5 config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/MiniMaxAI--MiniMax-M2.5_config.json)"},
	{"qwen3-235b-a22b-fp8", "Qwen/Qwen3-235B-A22B-FP8", nil, "huggingface.co/Qwen/Qwen3-235B-A22B-FP8 config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/Qwen--Qwen3-235B-A22B-FP8_config.json)"},
	{"qwen3.5-397b-a17b", "Qwen/Qwen3.5-397B-A17B", nil, "huggingface.co/Qwen/Qwen3.5-397B-A17B config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/Qwen--Qwen3.5-397B-A17B_config.json)"},
	{"qwen3-32b", "Qwen/Qwen3-32B", nil, "huggingface.co/Qwen/Qwen3-32B config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/Qwen--Qwen3-32B_config.json)"},
	{"qwen3-32b-fp8", "Qwen/Qwen3-32B-FP8", nil, "huggingface.co/Qwen/Qwen3-32B-FP8 config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/Qwen--Qwen3-32B-FP8_config.json)"},
}

// Builtins lists the built-in models in a stable order.
func Builtins() []Builtin { return append([]Builtin(nil), builtins...) }

// ids are the names a built-in goes by, lower case: its own, its Hugging
// Face id and the ids of the same architecture.
func (b Builtin) ids() []string {
	out := []string{b.Name, strings.ToLower(b.ID)}
	for _, a := range b.Also {
		out = append(out, strings.ToLower(a))
	}
	return out
}

// repo is the repository part of a Hugging Face id ("Llama-3.1-8B"), lower
// case.
func repo(id string) string { return strings.ToLower(id[strings.LastIndex(id, "/")+1:]) }

// Resolve finds the built-in a name means, as people type it: the built-in
// name or a Hugging Face id (either any case, with or without
// https://huggingface.co/), or an unambiguous prefix of a name or of a
// repository ("mixtral"). A prefix of several names, or none, is an error
// that lists the candidates or the closest names.
func Resolve(name string) (Builtin, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.TrimPrefix(strings.TrimPrefix(n, "https://"), "http://")
	n = strings.Trim(strings.TrimPrefix(n, "huggingface.co/"), "/")
	if n == "" {
		return Builtin{}, fmt.Errorf("no model named: give a built-in name or the path of a config.json (see 'gpucalc model list')")
	}
	for _, b := range builtins {
		for _, id := range b.ids() {
			if n == id {
				return b, nil
			}
		}
	}
	var match []Builtin
	for _, b := range builtins {
		if strings.HasPrefix(b.Name, n) || strings.HasPrefix(repo(b.ID), n) || strings.HasPrefix(strings.ToLower(b.ID), n) {
			match = append(match, b)
		}
	}
	if len(match) == 1 {
		return match[0], nil
	}
	if len(match) > 1 {
		var ns []string
		for _, b := range match {
			ns = append(ns, b.Name)
		}
		return Builtin{}, fmt.Errorf("%q names several built-in models: %s; give one of them (see 'gpucalc model list')", name, strings.Join(ns, ", "))
	}
	keys := map[string][]string{}
	for _, b := range builtins {
		keys[b.Name] = append(b.ids(), repo(b.ID))
	}
	return Builtin{}, fmt.Errorf("no built-in model %q (closest: %s) and no such file: give a built-in name or the path of a config.json (see 'gpucalc model list')", name, strings.Join(names.Closest(n, keys, 3), ", "))
}

// LoadBuiltin parses the built-in config a name resolves to (see Resolve).
func LoadBuiltin(name string) (Config, error) {
	b, err := Resolve(name)
	if err != nil {
		return Config{}, err
	}
	data, err := configFS.ReadFile("configs/" + b.Name + ".json")
	if err != nil {
		return Config{}, err
	}
	return Parse(b.Name, data)
}
