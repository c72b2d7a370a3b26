package deploy

import (
	"bytes"
	"embed"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/gpucalc/gpucalc/devices"

	"go.yaml.in/yaml/v3"
)

//go:embed data/*.yaml
var engineFS embed.FS

// Engine is a serving engine's scheduler and memory policy: the defaults of
// its version named in Source, one set per engine, never fitted to a model
// or a row.
type Engine struct {
	Name  string `yaml:"name" json:"name"`
	Title string `yaml:"title" json:"title"`
	// MaxTokens is the token budget of one step (vLLM's
	// max_num_batched_tokens, SGLang's chunked_prefill_size, TensorRT-LLM's
	// max_num_tokens); MaxSeqs the most sequences running at once.
	MaxTokens int64 `yaml:"max_num_batched_tokens" json:"max_num_batched_tokens"`
	MaxSeqs   int64 `yaml:"max_num_seqs" json:"max_num_seqs"`
	// Chunked: a prompt longer than the step's remaining budget is split
	// over steps; otherwise it waits for a step with room for all of it.
	Chunked bool `yaml:"chunked_prefill" json:"chunked_prefill"`
	// Mixed: prefill chunks share a step with the decode tokens; otherwise
	// a step is either a prefill batch (run first) or a decode batch.
	Mixed bool `yaml:"mixed" json:"mixed"`
	// MemoryShare is the share of memory the engine takes (vLLM's
	// gpu_memory_utilization, SGLang's mem_fraction_static, TensorRT-LLM's
	// free_gpu_memory_fraction); MemoryOf says of what: "total" (weights
	// and KV both inside it) or "free" (the KV pool's share of what the
	// weights and activations leave).
	MemoryShare float64 `yaml:"gpu_memory_utilization" json:"gpu_memory_utilization"`
	MemoryOf    string  `yaml:"memory_of" json:"memory_of"`
	// BlockSize is the tokens of one KV block (page).
	BlockSize int64 `yaml:"block_size" json:"block_size"`
	// Overlap: the scheduler builds the next step's batch while the GPU
	// runs the current one (TensorRT-LLM's overlap scheduler, SGLang's
	// overlap schedule, vLLM's async scheduling), so a request that
	// arrives during a step joins the step after next, and a step's
	// tokens reach the clients after the following step.
	Overlap bool `yaml:"overlap_schedule" json:"overlap_schedule"`
	// GraphTokens is the most tokens of a step carrying prefill chunks
	// that the engine replays as a CUDA graph (vLLM's piecewise graphs up
	// to its largest capture size; 0: such a step never is, as SGLang's
	// extend batches and TensorRT-LLM's context iterations). A larger one
	// launches its kernels one by one from the host and takes at least
	// their launches (hostKernelSeconds a kernel). Decode-only steps
	// replay a graph.
	GraphTokens int64 `yaml:"prefill_graph_tokens" json:"prefill_graph_tokens"`
	// Reserve is what admission holds blocks for: "prompt" (and a sequence
	// that finds no block for its next token preempts the newest running
	// one) or "request" (prompt and every output token: no preemption).
	Reserve string `yaml:"reserve" json:"reserve"`
	// StepOverhead is the host's time per engine step besides the GPU's:
	// scheduling, input preparation, sampling, the API server.
	StepOverhead float64 `yaml:"step_overhead_s" json:"step_overhead_seconds"`
	// Tiers are defaults the engine sets by the GPU it runs on (the first
	// that matches); DPAttentionReserveGiB is what a tier's reserve grows
	// by under attention data parallelism.
	Tiers                 []Tier  `yaml:"memory_tiers" json:"-"`
	DPAttentionReserveGiB float64 `yaml:"dp_attention_reserve_gib" json:"-"`
	Source                string  `yaml:"source" json:"source"`
}

// Tier is an engine's defaults on GPUs of less than BelowGiB of memory
// (0: any) whose name contains NameContains (empty: any): its budget and
// sequences where set, and where ReserveGiB or ReserveGiBPerGPU is set the
// memory share that leaves ReserveGiB + ReserveGiBPerGPU × the GPUs of a
// model instance unused (SGLang's mem_fraction_static).
type Tier struct {
	BelowGiB         float64 `yaml:"below_gib"`
	NameContains     string  `yaml:"name_contains"`
	MaxTokens        int64   `yaml:"max_num_batched_tokens"`
	MaxSeqs          int64   `yaml:"max_num_seqs"`
	ReserveGiB       float64 `yaml:"reserve_gib"`
	ReserveGiBPerGPU float64 `yaml:"reserve_gib_per_gpu"`
}

// onDevice is e with the defaults of its tier for d, a model instance of
// gpus GPUs (dpAttention: its attention data parallel); q's overrides
// win.
func (e Engine) onDevice(d devices.Device, gpus int64, dpAttention bool, q Query) Engine {
	gib := float64(d.Memory.Bytes) / (1 << 30)
	name := strings.ToLower(d.Name)
	for _, t := range e.Tiers {
		if t.BelowGiB > 0 && gib >= t.BelowGiB || t.NameContains != "" && !strings.Contains(name, t.NameContains) {
			continue
		}
		if t.MaxTokens > 0 && q.MaxTokens == 0 {
			e.MaxTokens = t.MaxTokens
		}
		if t.MaxSeqs > 0 && q.MaxSeqs == 0 {
			e.MaxSeqs = t.MaxSeqs
		}
		if (t.ReserveGiB > 0 || t.ReserveGiBPerGPU > 0) && q.MemoryShare == 0 {
			r := t.ReserveGiB + t.ReserveGiBPerGPU*float64(gpus)
			if dpAttention {
				r += e.DPAttentionReserveGiB
			}
			e.MemoryShare = math.Round((gib-r)/gib*1000) / 1000
		}
		break
	}
	e.Tiers = nil
	return e
}

// Reserve policies.
const (
	ReservePrompt  = "prompt"
	ReserveRequest = "request"
)

// engines are the embedded profiles, by name.
var engines = mustEngines()

func mustEngines() map[string]Engine {
	out := map[string]Engine{}
	files, err := engineFS.ReadDir("data")
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		data, err := engineFS.ReadFile("data/" + f.Name())
		if err != nil {
			panic(err)
		}
		e, err := parseEngine(f.Name(), data)
		if err != nil {
			panic(err)
		}
		out[e.Name] = e
	}
	return out
}

// parseEngine reads one profile strictly and checks its ranges.
func parseEngine(file string, data []byte) (Engine, error) {
	var e Engine
	d := yaml.NewDecoder(bytes.NewReader(data))
	d.KnownFields(true)
	if err := d.Decode(&e); err != nil {
		return Engine{}, fmt.Errorf("%s: %w", file, err)
	}
	switch {
	case e.Name == "" || e.Source == "":
		return Engine{}, fmt.Errorf("%s: an engine needs a name and a source", file)
	case e.MaxTokens < 1 || e.MaxSeqs < 1 || e.BlockSize < 1:
		return Engine{}, fmt.Errorf("%s: max_num_batched_tokens, max_num_seqs and block_size must be positive", file)
	case e.MemoryShare <= 0 || e.MemoryShare > 1:
		return Engine{}, fmt.Errorf("%s: gpu_memory_utilization %g: expected more than 0, at most 1", file, e.MemoryShare)
	case e.MemoryOf != "total" && e.MemoryOf != "free":
		return Engine{}, fmt.Errorf("%s: memory_of %q: expected total or free", file, e.MemoryOf)
	case e.Reserve != ReservePrompt && e.Reserve != ReserveRequest:
		return Engine{}, fmt.Errorf("%s: reserve %q: expected prompt or request", file, e.Reserve)
	case !tiersValid(e.Tiers) || e.DPAttentionReserveGiB < 0:
		return Engine{}, fmt.Errorf("%s: memory_tiers: below_gib, the budget, the sequences and the reserves must not be negative", file)
	case e.StepOverhead < 0 || e.StepOverhead > 0.1:
		return Engine{}, fmt.Errorf("%s: step_overhead_s %g: expected 0 to 0.1 s", file, e.StepOverhead)
	}
	return e, nil
}

func tiersValid(ts []Tier) bool {
	for _, t := range ts {
		if t.BelowGiB < 0 || t.MaxTokens < 0 || t.MaxSeqs < 0 || t.ReserveGiB < 0 || t.ReserveGiBPerGPU < 0 {
			return false
		}
	}
	return true
}

// Engines lists the engine names, sorted.
func Engines() []string {
	out := make([]string, 0, len(engines))
	for n := range engines {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// LookupEngine finds an engine profile by name (any case; "tensorrt-llm"
// and "trt-llm" name trtllm).
func LookupEngine(name string) (Engine, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "tensorrt-llm", "tensorrt_llm", "trt-llm", "trt_llm":
		n = "trtllm"
	}
	if e, ok := engines[n]; ok {
		return e, nil
	}
	return Engine{}, fmt.Errorf("unknown engine %q; expected one of %s", name, strings.Join(Engines(), ", "))
}
