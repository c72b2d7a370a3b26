package model

import (
	"embed"
	"fmt"
	"strings"
)

//go:embed configs/*.json
var configFS embed.FS

// Builtin is a popular model whose config.json ships with gpucalc.
type Builtin struct {
	Name string `json:"name"`
	// Source is where the config.json was published and where the copy
	// here was taken from.
	Source string `json:"source"`
}

// builtins names every file under configs/ and its source. The files are
// byte-for-byte copies of the published config.json (Hugging Face hub),
// taken from the repositories named, which vendor them.
var builtins = []Builtin{
	{"llama-3.2-1b", "huggingface.co/meta-llama/Llama-3.2-1B config.json"},
	{"llama-3.1-8b", "huggingface.co/meta-llama/Llama-3.1-8B config.json"},
	{"llama-3.1-70b", "huggingface.co/meta-llama/Llama-3.1-70B config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/meta-llama--Meta-Llama-3.1-70B_config.json)"},
	{"mistral-7b-v0.1", "huggingface.co/mistralai/Mistral-7B-v0.1 config.json (transformers 4.34.0.dev0 revision), as quoted in several public repositories"},
	{"qwen2-7b-instruct", "huggingface.co/Qwen/Qwen2-7B-Instruct config.json, as vendored in github.com/ThanatosShinji/onnx-tool (onnx_tool/llm.py)"},
	{"qwen3-8b", "huggingface.co/Qwen/Qwen3-8B config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/Qwen--Qwen3-8B_config.json)"},
	{"phi-3-mini-4k-instruct", "huggingface.co/microsoft/Phi-3-mini-4k-instruct config.json, as vendored in github.com/ThanatosShinji/onnx-tool (onnx_tool/llm.py)"},
	{"gemma-2-9b", "huggingface.co/google/gemma-2-9b config.json (transformers 4.42.0.dev0 revision), as quoted in public repositories"},
	{"gemma-3-1b-it", "huggingface.co/google/gemma-3-1b-it config.json (transformers 4.52.4 revision), as quoted in public repositories"},
	{"mixtral-8x7b-v0.1", "huggingface.co/mistralai/Mixtral-8x7B-v0.1 config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/mistralai--Mixtral-8x7B-v0.1_config.json)"},
	{"qwen3-30b-a3b", "huggingface.co/Qwen/Qwen3-30B-A3B config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/Qwen--Qwen3-30B-A3B_config.json)"},
	{"deepseek-v3", "huggingface.co/deepseek-ai/DeepSeek-V3 config.json, as vendored in github.com/ai-dynamo/aiconfigurator (model_configs/deepseek-ai--DeepSeek-V3_config.json)"},
}

// Builtins lists the built-in models in a stable order.
func Builtins() []Builtin { return append([]Builtin(nil), builtins...) }

// LoadBuiltin parses the built-in config of that name (case-insensitive).
func LoadBuiltin(name string) (Config, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, b := range builtins {
		if b.Name == n {
			data, err := configFS.ReadFile("configs/" + b.Name + ".json")
			if err != nil {
				return Config{}, err
			}
			return Parse(b.Name, data)
		}
	}
	names := make([]string, len(builtins))
	for i, b := range builtins {
		names[i] = b.Name
	}
	return Config{}, fmt.Errorf("no built-in model %q; built-in models are %s (or give a path to a config.json)", name, strings.Join(names, ", "))
}
