package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

type modelOptions struct {
	f       *factory
	devices deviceFlags
	model   string
	name    string
	req     model.Request
	dtype   string
	weights string
	kv      string
	engine  string
	ops     bool
	failOn  string
	chart   chartFlags
}

const modelHow = `Memory per GPU: the exact parameter count transformers builds (tied
embeddings, biases, norms, q/k norms, experts); linear weights in the weight
type, embeddings and norms in the activation type; the KV cache of every
layer at the context (GQA: the KV heads; MLA: the latent and rotary key;
sliding-window layers keep only their window, as transformers does); the
activation workspace of one forward, of the phase (prefill or decode step)
whose total is larger, as labelled. Usable memory is what CUDA can allocate
(79.2 GiB of an 80 GiB H100). Tensor parallel shards heads, KV heads, MLP
columns and the vocabulary (Megatron) and adds two all-reduces per layer,
priced from the device's measured NCCL curve (H100/H200 NVLink) or from the
catalog's peer link (other NVLink parts; PCIe parts use the host link) at
the NCCL efficiency measured on H200s.

Times: the op list of one layer (norms, projections, rotary, KV writes,
flash attention, MLP or experts) times the layer count, plus embedding,
final norm and LM head on the last token, each op priced by roofline. The
lower bound sums datasheet-peak bounds. --engine graph (the default: a
serving engine, or the reference decoder) runs the kernels back to back
(each op's work at achievable rates plus the measured kernel period), as a
CUDA-graph decode step or a GPU-bound prefill does, with split-KV decode
attention over the KV heads. --engine eager is Hugging Face transformers'
eager forward (sdpa, StaticCache): its own kernels (RMSNorm as eight, KV
heads repeated before a masked SDPA at decode), the GPU time their durations
sum to, and a wall time: the longer of that and the kernels launched from
Python at the CPU cost per kernel measured on the reference host.`

func newCmdModel(f *factory, runF func(*modelOptions) error) *cobra.Command {
	opts := &modelOptions{f: f}
	cmd := &cobra.Command{
		Use:   "model MODEL",
		Short: "Memory, prefill and decode time of an LLM from its config.json",
		Long: `Answer for a decoder-only LLM, from its Hugging Face config.json (a file, a
directory holding one, or a built-in: its name from 'gpucalc model list', its
Hugging Face id such as meta-llama/Llama-3.1-70B in any case, or a prefix
such as mixtral that names one): does it
fit on the GPU (weights, KV cache, workspace per GPU, the smallest tensor-
parallel degree that fits), how long prefill takes (time to first token),
how long one decode step takes (time per output token), tokens per second,
and what dominates decode: weights, KV cache reads, or kernel launches.

Model types: ` + strings.Join(model.ModelTypes, ", ") + `.

` + modelHow,
		Example: `  gpucalc model llama-3.1-8b
  gpucalc model llama-3.1-70b --device h100 --tp 4 --batch 32 --ctx 8192
  gpucalc model meta-llama/Llama-3.1-70B-Instruct --device h200 --tp 2
  gpucalc model path/to/config.json --name my-model --prompt 4096 --gen 512 --devices h100,h200
  gpucalc model qwen3-30b-a3b --weights fp8 --kv fp8 --ops
  gpucalc model deepseek-r1 --device b200 --ep 8 --batch 32 --ctx 4096
  gpucalc model llama-3.1-8b --batch 64 --ctx 4096 --plot decode.svg
  gpucalc model llama-3.1-8b --ctx 32768 --engine eager
  gpucalc model list`,
		Args: args(cobra.ExactArgs(1)),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var names []cobra.Completion
			for _, b := range model.Builtins() {
				names = append(names, b.Name)
			}
			return names, cobra.ShellCompDirectiveDefault
		},
		RunE: func(_ *cobra.Command, a []string) error {
			opts.model = a[0]
			return execute(opts, runF, modelRun)
		},
	}
	f.addDeviceFlags(cmd, &opts.devices, true)
	f.addChartFlags(cmd, &opts.chart, "the decode step's ops on the roofline", chart.DefaultSize)
	fl := cmd.Flags()
	fl.Int64Var(&opts.req.TP, "tp", model.DefaultTP, "tensor-parallel `GPUs` (one host holds 8; more run their all-reduces over the network)")
	fl.Int64Var(&opts.req.EP, "ep", 0, "a MoE model's expert-parallel `GPUs`: its routed experts split over them; moe-tp × ep beyond --tp makes (moe-tp × ep)/tp attention groups of --batch sequences that share the experts, tokens sent to them and back (default 1: none)")
	fl.Int64Var(&opts.req.MoETP, "moe-tp", 0, "tensor-parallel `GPUs` of each routed expert (default 1 with --ep, else --tp)")
	fl.Int64Var(&opts.req.Batch, "batch", model.DefaultBatch, "`sequences` in the batch")
	fl.Int64Var(&opts.req.Prompt, "prompt", model.DefaultPrompt, "prompt `tokens` per sequence (prefill)")
	fl.Int64Var(&opts.req.Ctx, "ctx", model.DefaultCtx, "`tokens` in the KV cache for the decode step, at least the prompt (default: the prompt); beyond the model's max_position_embeddings gets a warning")
	fl.Int64Var(&opts.req.Gen, "gen", model.DefaultGen, "`tokens` to generate, for an end-to-end time")
	fl.StringVar(&opts.dtype, "dtype", model.DefaultDType, "activation (compute) data `type`; also the default of --weights and --kv")
	fl.StringVar(&opts.weights, "weights", "", "linear weights' `type`: bf16, fp8 (fp8 GEMMs), int8 (int8 GEMMs) or int4 (weight-only, group 128) (default: the config's quantization_config, else --dtype)")
	fl.StringVar(&opts.name, "name", "", nameHelp)
	fl.StringVar(&opts.kv, "kv", "", "KV cache `type`: bf16 or fp8 (default: --dtype)")
	fl.StringVar(&opts.engine, "engine", string(model.DefaultEngine), "`engine` that runs the steps: graph (a serving engine: CUDA-graph decode, split-KV attention) or eager (transformers from Python)")
	_ = cmd.RegisterFlagCompletionFunc("engine", cobra.FixedCompletions([]string{string(model.Graph), string(model.Eager)}, cobra.ShellCompDirectiveNoFileComp))
	fl.BoolVar(&opts.ops, "ops", false, "also list every op of the prefill and decode steps")
	fl.StringVar(&opts.failOn, "fail-on", "", "exit 1 when the `condition` holds on any device: no-fit (the model does not fit at --tp)")
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{model.FailNoFit}, cobra.ShellCompDirectiveNoFileComp))
	fl.BoolVar(&opts.req.FullCache, "full-cache", false, fullCacheHelp)
	for _, n := range []string{"dtype", "weights", "kv"} {
		_ = cmd.RegisterFlagCompletionFunc(n, cobra.FixedCompletions([]string{"bf16", "fp16", "fp8", "int4"}, cobra.ShellCompDirectiveNoFileComp))
	}
	cmd.AddCommand(newCmdModelList(f, nil), newCmdModelBatch(f, nil))
	return cmd
}

// modelSource reads what a model argument names: a config.json or a
// directory holding one (a local download may be named like its Hugging
// Face id, so a path that exists comes first) as its shown name and
// contents, else the built-in (nil contents: see model.Resolve). A file
// name that does not exist is a failure, as for every input; any other
// name is the built-in's to refuse, listing the closest.
func (f *factory) modelSource(arg string) (string, []byte, error) {
	if _, statErr := os.Stat(arg); statErr != nil && arg != "-" {
		if _, err := model.Resolve(arg); err == nil || !looksLikeFile(arg) {
			return arg, nil, nil
		}
	}
	name := arg
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		name = filepath.Join(arg, "config.json")
	}
	data, shown, err := f.ReadAll(name, model.MaxConfigBytes)
	return shown, data, err
}

// loadModel loads the model a model argument names (modelSource).
func (f *factory) loadModel(arg string) (model.Config, error) {
	return f.loadNamed(arg, "")
}

// loadNamed loads the model arg names under label, when one is given
// (--name).
func (f *factory) loadNamed(arg, label string) (model.Config, error) {
	name, data, err := f.modelSource(arg)
	if err != nil {
		return model.Config{}, err
	}
	c, err := model.Query{Model: name, Config: data, Name: label}.Load()
	return c, usage(err)
}

// looksLikeFile tells a file name from a model name or a Hugging Face id
// (meta-llama/Llama-3.1-8B has a slash and a dot, but is no file): by a
// file's extension or a path's start.
func looksLikeFile(arg string) bool {
	a := strings.ToLower(arg)
	for _, ext := range []string{".json", ".gz", ".yaml", ".yml", ".csv", ".txt"} {
		if strings.HasSuffix(a, ext) {
			return true
		}
	}
	for _, start := range []string{"/", "./", "../", "~", `\`, `.\`} {
		if strings.HasPrefix(a, start) {
			return true
		}
	}
	return filepath.VolumeName(arg) != ""
}

// query maps the argument and flags onto the model question, reading the
// config file the argument names.
func (opts *modelOptions) query() (model.Query, error) {
	f := opts.f
	c, err := f.Catalog()
	if err != nil {
		return model.Query{}, err
	}
	name, data, err := f.modelSource(opts.model)
	if err != nil {
		return model.Query{}, err
	}
	r := opts.req
	return model.Query{Model: name, Config: data, Name: opts.name, Devices: f.choice(opts.devices),
		TP: r.TP, EP: r.EP, MoETP: r.MoETP, Batch: r.Batch, Prompt: r.Prompt, Ctx: r.Ctx, Gen: r.Gen,
		DType: opts.dtype, Weights: opts.weights, KV: opts.kv, Engine: opts.engine, FullCache: r.FullCache, Ops: opts.ops, FailOn: opts.failOn,
		Catalog: c, Datasheet: f.datasheet}, nil
}

func modelRun(opts *modelOptions) error {
	f := opts.f
	form, err := f.OutFormat(nil, &opts.chart)
	if err != nil {
		return err
	}
	mq, err := opts.query()
	if err != nil {
		return err
	}
	a, err := mq.Answer()
	if err != nil {
		return usage(err)
	}
	c, q, rs := a.Config, a.Request, a.Reports
	for _, w := range rs[0].Warnings { // the same on every device
		f.Warn("%s", w)
	}
	notes, err := opts.chart.draw(func() (chart.Chart, error) {
		return reports.ModelDecodeChart(c.Name, q, devicesOf(a.Devices), rs)
	})
	if err != nil {
		return err
	}
	for _, r := range rs {
		if r.NotAvailable == "" {
			continue
		}
		if form == reports.FormatCSV { // the table says so, JSON in the report
			f.Warn("%s", r.Error)
		}
		if opts.chart.file != "" {
			notes = append(notes, "Not drawn: "+r.Device+" ("+r.NotAvailable+").")
		}
	}
	unfit := a.Unfit()
	if len(unfit) > 0 && opts.chart.file != "" {
		notes = append(notes, "Not drawn: "+strings.Join(unfit, ", ")+" (does not fit).")
	}
	var view any = rs
	if len(rs) == 1 {
		view = rs[0]
	}
	err = f.Output(form, nil, notes, view,
		func() []reports.Table { return reports.ModelTables(c.Name, q, rs, a.Devices[0].Origin, mq.Ops) },
		func() []reports.Table { return []reports.Table{reports.ModelRows(rs)} })
	if err == nil && mq.FailOn != "" && len(unfit) > 0 {
		err = fmt.Errorf("%s does not fit on %s at tp %d (--fail-on %s)", c.Name, strings.Join(unfit, ", "), q.TP, model.FailNoFit)
	}
	return err
}

// fullCacheHelp describes --full-cache.
const fullCacheHelp = "size sliding-window layers' KV cache for the whole context, as a decoder that preallocates its cache does (default: only the window, as transformers keeps)"

// nameHelp describes --name, the label of a loaded model.
const nameHelp = "`label` of the model in the output (default: the built-in name or the config's path)"
