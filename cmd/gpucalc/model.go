package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/roofline"
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
	fl.Int64Var(&opts.req.TP, "tp", 1, "tensor-parallel `GPUs` of one host")
	fl.Int64Var(&opts.req.Batch, "batch", model.DefaultBatch, "`sequences` in the batch")
	fl.Int64Var(&opts.req.Prompt, "prompt", model.DefaultPrompt, "prompt `tokens` per sequence (prefill)")
	fl.Int64Var(&opts.req.Ctx, "ctx", 0, "`tokens` in the KV cache for the decode step, at least the prompt (default: the prompt); beyond the model's max_position_embeddings gets a warning")
	fl.Int64Var(&opts.req.Gen, "gen", 0, "`tokens` to generate, for an end-to-end time")
	fl.StringVar(&opts.dtype, "dtype", "bf16", "activation (compute) data `type`; also the default of --weights and --kv")
	fl.StringVar(&opts.weights, "weights", "", "linear weights' `type`: bf16, fp8 (fp8 GEMMs), int8 (int8 GEMMs) or int4 (weight-only, group 128) (default: the config's quantization_config, else --dtype)")
	fl.StringVar(&opts.name, "name", "", "`label` of the model in the output (default: the built-in name or the config's path)")
	fl.StringVar(&opts.kv, "kv", "", "KV cache `type`: bf16 or fp8 (default: --dtype)")
	fl.StringVar(&opts.engine, "engine", string(model.Graph), "`engine` that runs the steps: graph (a serving engine: CUDA-graph decode, split-KV attention) or eager (transformers from Python)")
	_ = cmd.RegisterFlagCompletionFunc("engine", cobra.FixedCompletions([]string{string(model.Graph), string(model.Eager)}, cobra.ShellCompDirectiveNoFileComp))
	fl.BoolVar(&opts.ops, "ops", false, "also list every op of the prefill and decode steps")
	fl.BoolVar(&opts.req.FullCache, "full-cache", false, fullCacheHelp)
	for _, n := range []string{"dtype", "weights", "kv"} {
		_ = cmd.RegisterFlagCompletionFunc(n, cobra.FixedCompletions([]string{"bf16", "fp16", "fp8", "int4"}, cobra.ShellCompDirectiveNoFileComp))
	}
	cmd.AddCommand(newCmdModelList(f, nil), newCmdModelBatch(f, nil))
	return cmd
}

// loadModel resolves a model argument: a config.json or a directory holding
// one (a local download may be named like its Hugging Face id, so a path
// that exists comes first), else a built-in (see model.Resolve). A file
// name that does not exist is a failure, as for every input; any other
// name that is not a built-in is a usage error listing the closest.
func (f *factory) loadModel(arg string) (model.Config, error) {
	if _, statErr := os.Stat(arg); statErr != nil && arg != "-" {
		c, err := model.LoadBuiltin(arg)
		if err == nil {
			return c, nil
		}
		if !looksLikeFile(arg) {
			return model.Config{}, usageError{err}
		}
	}
	name := arg
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		name = filepath.Join(arg, "config.json")
	}
	data, shown, err := f.ReadAll(name, model.MaxConfigBytes)
	if err != nil {
		return model.Config{}, err
	}
	return model.Parse(shown, data)
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

// request checks the flags and resolves the data types.
func (opts *modelOptions) request() (model.Request, error) {
	q := opts.req
	for _, x := range []struct {
		flag string
		v    int64
		min  int64
	}{{"--tp", q.TP, 1}, {"--batch", q.Batch, 1}, {"--prompt", q.Prompt, 1}, {"--ctx", q.Ctx, 0}, {"--gen", q.Gen, 0}} {
		if x.v < x.min {
			return q, usagef("%s %d: expected %d or more", x.flag, x.v, x.min)
		}
	}
	act, err := devices.ParseDType(opts.dtype)
	if err != nil {
		return q, usagef("--dtype: %w", err)
	}
	q.Activations = act
	if opts.weights != "" {
		if q.Weights, err = model.ParseWeightType(opts.weights); err != nil {
			return q, usagef("--weights: %w", err)
		}
	}
	if opts.kv != "" {
		if q.KV, err = devices.ParseDType(opts.kv); err != nil {
			return q, usagef("--kv: %w", err)
		}
	}
	if q.Engine, err = model.ParseEngine(opts.engine); err != nil {
		return q, usagef("--engine: %w", err)
	}
	return q, nil
}

func modelRun(opts *modelOptions) error {
	f := opts.f
	form, err := f.OutFormat(nil, &opts.chart)
	if err != nil {
		return err
	}
	q, err := opts.request()
	if err != nil {
		return err
	}
	c, err := f.loadModel(opts.model)
	if err != nil {
		return err
	}
	if opts.name != "" {
		c.Name = opts.name
	}
	// The config's quantization_config gives the weight type --weights
	// does not.
	if q, err = c.FillRequest(q); err != nil {
		return usageError{err}
	}
	ts, ms, err := f.Rooflines(opts.devices)
	if err != nil {
		return err
	}
	var rs []model.Report
	for _, m := range ms {
		r, err := c.Serve(q, m)
		if err != nil {
			return usageError{fmt.Errorf("%s: %w", c.Name, err)}
		}
		rs = append(rs, r)
	}
	for _, w := range rs[0].Warnings { // the same on every device
		f.Warn("%s", w)
	}
	notes, err := opts.chart.draw(func() (chart.Chart, error) {
		return reports.ModelDecodeChart(c.Name, q, devicesOf(ts), rs), nil
	})
	if err != nil {
		return err
	}
	var view any = rs
	if len(rs) == 1 {
		view = rs[0]
	}
	return f.OutputNotes(form, nil, notes, view,
		func() []reports.Table { return reports.ModelTables(c.Name, q, rs, ts[0].Origin, opts.ops) },
		func() []reports.Table { return []reports.Table{reports.ModelRows(rs)} })
}

func newCmdModelList(f *factory, runF func(*factory) error) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List the built-in model configs and their sources",
		Example: `  gpucalc model list`,
		Args:    args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			return execute(f, runF, modelListRun)
		},
	}
}

func modelListRun(f *factory) error {
	form, err := f.OutFormat(nil)
	if err != nil {
		return err
	}
	type entry struct {
		Name      string   `json:"name"`
		ID        string   `json:"hf_id"`
		Also      []string `json:"same_architecture"`
		ModelType string   `json:"model_type"`
		Params    int64    `json:"params"`
		Source    string   `json:"source"`
	}
	var list []entry
	var rows [][]string
	for _, b := range model.Builtins() {
		c, err := model.LoadBuiltin(b.Name)
		if err != nil {
			return err
		}
		p := c.Params().Total
		list = append(list, entry{b.Name, b.ID, append([]string{}, b.Also...), c.ModelType, p, b.Source})
		rows = append(rows, []string{b.Name, b.ID, c.ModelType, strconv.FormatInt(p, 10), b.Source})
	}
	if form == reports.FormatJSON {
		return f.JSON(list)
	}
	return f.Render(form, reports.ModelList(rows))
}

// fullCacheHelp describes --full-cache.
const fullCacheHelp = "size sliding-window layers' KV cache for the whole context, as a decoder that preallocates its cache does (default: only the window, as transformers keeps)"

type modelBatchOptions struct {
	f         *factory
	input     string
	fullCache bool
	engine    string
}

func newCmdModelBatch(f *factory, runF func(*modelBatchOptions) error) *cobra.Command {
	opts := &modelBatchOptions{f: f}
	cmd := &cobra.Command{
		Use:   "batch --input FILE|-",
		Short: "Evaluate a CSV of model shapes (model,device,phase,batch,seq,ctx,tp)",
		Long: `Read CSV with the header ` + strings.Join(model.BatchColumns, ",") + `: model is a
built-in name or a path to a config.json; device a GPU name (empty: the
default device); phase prefill (uses seq) or decode (uses ctx); tp 1 when
empty. bf16 throughout, except weights a config's quantization_config ships
quantized (DeepSeek-V3: fp8). Write the input columns followed by
` + strings.Join(reports.ModelBatchOut, ",") + `.
A bad row gets its error in the error column and never stops the batch; the
exit code is 1 if any row failed.

` + modelHow,
		Example: `  gpucalc model batch --input shapes.csv --format csv
  printf 'model,device,phase,batch,seq,ctx,tp\nllama-3.1-8b,h100,decode,64,1,4096,1\n' | gpucalc model batch --input -`,
		Args: args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			return execute(opts, runF, modelBatchRun)
		},
	}
	f.addInputFlag(cmd, &opts.input)
	cmd.Flags().BoolVar(&opts.fullCache, "full-cache", false, fullCacheHelp)
	cmd.Flags().StringVar(&opts.engine, "engine", string(model.Graph), "`engine` that runs the steps: graph or eager (see 'gpucalc model --help')")
	_ = cmd.RegisterFlagCompletionFunc("engine", cobra.FixedCompletions([]string{string(model.Graph), string(model.Eager)}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func modelBatchRun(opts *modelBatchOptions) error {
	f := opts.f
	form, err := f.OutFormat(nil)
	if err != nil {
		return err
	}
	engine, err := model.ParseEngine(opts.engine)
	if err != nil {
		return usagef("--engine: %w", err)
	}
	// The rows before a break in the input are still answered.
	rows, name, readErr := parseInput(f, opts.input, model.ReadBatch)
	if readErr != nil && len(rows) == 0 {
		return readErr
	}
	if len(rows) == 0 {
		return fmt.Errorf("%s: the batch has a header but no rows", name)
	}
	for i := range rows {
		rows[i].Shape.FullCache, rows[i].Shape.Engine = opts.fullCache, engine
	}
	out := evaluateBatch(f, rows)
	failed := 0
	for _, r := range out {
		if r.Err != nil {
			failed++
		}
	}
	if form == reports.FormatJSON {
		err = f.JSON(reports.ModelBatchJSON(model.BatchColumns, out))
	} else {
		err = f.Render(form, reports.ModelBatch(model.BatchColumns, out))
	}
	if err != nil {
		return err
	}
	if readErr != nil {
		return batchFailures(failed, len(out), readErr)
	}
	if failed > 0 {
		return fmt.Errorf("%s: %d of %d rows failed (see the error column)", name, failed, len(out))
	}
	return nil
}

// evaluateBatch answers every row, loading each model and device once.
func evaluateBatch(f *factory, rows []model.BatchRow) []reports.ModelBatchRow {
	type loaded struct {
		c   model.Config
		err error
	}
	models := map[string]loaded{}
	type dev struct {
		m   *roofline.Model
		err error
	}
	devs := map[string]dev{}
	out := make([]reports.ModelBatchRow, len(rows))
	for i, r := range rows {
		o := &out[i]
		o.Cells = r.Cells
		if o.Err = r.Err; o.Err != nil {
			o.Err = fmt.Errorf("line %d: %w", r.Line, o.Err)
			continue
		}
		l, ok := models[r.Model]
		if !ok {
			l.c, l.err = f.loadModel(r.Model)
			models[r.Model] = l
		}
		d, ok := devs[r.Device]
		if !ok {
			name, _ := f.deviceName(r.Device)
			var t devices.Device
			if t, d.err = f.Lookup(name); d.err == nil {
				d.m, d.err = roofline.New(t)
			}
			devs[r.Device] = d
		}
		switch {
		case l.err != nil:
			o.Err = l.err
		case d.err != nil:
			o.Err = d.err
		default:
			o.Result, o.Err = l.c.Analyze(r.Shape, d.m)
			// The batch reports totals; drop the per-op detail.
			o.Result.Ops, o.Result.Points = nil, nil
		}
		if o.Err != nil {
			o.Err = fmt.Errorf("line %d: %w", r.Line, o.Err)
		}
	}
	return out
}
