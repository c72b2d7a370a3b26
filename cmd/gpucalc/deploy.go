package main

import (
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/deploy"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/units"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type deployOptions struct {
	f       *factory
	devices deviceFlags
	q       deploy.Query
	disagg  bool
	d       deploy.Disagg
	// The SLA search: --ttft and --tpot as given, --gpus.
	ttft, tpot string
	gpus       int64
	chart      chartFlags
	flags      *pflag.FlagSet // which flags were given
}

// deployDefaulted are deploy's flags whose zero value stands for a default
// (the engine's, or one that depends on another flag): given as 0, they
// would silently answer another question.
var deployDefaulted = []string{"range-ratio", "concurrency", "rate", "requests", "max-tokens", "max-seqs", "gpu-memory-utilization", "gpus",
	"ep", "moe-tp", "prefill-tp", "prefill-workers", "prefill-dp", "prefill-ep", "prefill-moe-tp", "decode-tp", "decode-workers", "decode-dp", "decode-ep", "decode-moe-tp"}

const deployHow = `The engine is simulated step by step. Each step's batch is the decoding
sequences (one token each) plus prefill chunks under the engine's token
budget (vLLM's max_num_batched_tokens, SGLang's chunked_prefill_size,
TensorRT-LLM's max_num_tokens: --max-tokens); SGLang runs a prefill batch
on its own, ahead of decoding, the others mix the two. KV blocks come from
the engine's share of memory (--gpu-memory-utilization) less the weights and
the activations of a full step; a request is admitted when blocks for its
prompt are free (TensorRT-LLM: for its prompt and output), and a sequence
that finds no block for its next token preempts the newest (recomputed).
A step's time is model's op list priced by roofline over the step's tokens
(CUDA-graph decode, the kernels serving engines fuse), decode attention at
the sequences' contexts, each prefill chunk's attention against its prefix,
plus the engine's per-step CPU time; a prefill step the engine does not
replay as a CUDA graph takes at least its kernels' launches from the host.
A MoE model's experts split over
--ep GPUs (each --moe-tp ways) see every attention rank's tokens, sent to
them and back over NVLink (beyond a host's NVLink domain, its NICs).
Closed-loop clients send their first requests at once, as benchmarks do
(that first wave is weighed as one of --requests' 10 per client), then
drift apart (SGLang's stay in the waves its prefill batches make) and send
their next request when the last ends. Engine profiles, their defaults by
GPU and their sources: the docs.`

func newCmdDeploy(f *factory, runF func(*deployOptions) error) *cobra.Command {
	opts := &deployOptions{f: f}
	cmd := &cobra.Command{
		Use:   "deploy MODEL",
		Short: "TTFT, TPOT and tokens/s of a model served by vLLM, SGLang or TensorRT-LLM under load",
		Long: `Answer how a deployment serves under load: a model (a built-in name, a
Hugging Face id or a config.json, as 'gpucalc model' takes) on a GPU, with
tensor parallelism and replicas, run by an engine (` + strings.Join(deploy.Engines(), ", ") + `),
serving closed-loop clients (--concurrency, as benchmark tools run) or a
request rate (--rate), every request --isl tokens in and --osl out. It
answers TTFT, TPOT and end-to-end latency (mean and p90), tokens/s for the
deployment, per GPU and per user, and the KV cache's capacity.

With --ttft and/or --tpot it searches instead: over --devices, tensor
parallelism, replicas and concurrency (and, with --gpus, disaggregated
prefill and decode pools), it ranks the deployments that meet the targets
by tokens/s per GPU and says why the others fail; --plot draws the Pareto
front of tokens/s per GPU against tokens/s per user.

` + deployHow,
		Example: `  gpucalc deploy llama-3.1-70b --device h100 --tp 4 --concurrency 32 --weights fp8
  gpucalc deploy llama-3.1-8b --device h100 --engine trtllm --isl 4096 --osl 512 --concurrency 64
  gpucalc deploy qwen3-32b --device h100 --tp 2 --rate 4 --engine sglang
  gpucalc deploy llama-3.1-70b --device b200 --tp 8 --weights fp4 --format json
  gpucalc deploy llama-3.1-70b --device h100 --weights fp8 --disagg --prefill-tp 2 --decode-tp 4
  gpucalc deploy deepseek-r1 --device b200 --dp 8 --ep 8 --engine trtllm --concurrency 256
  gpucalc deploy llama-3.1-70b --ttft 2s --tpot 50ms --devices h100,h200,b200 --weights fp8
  gpucalc deploy llama-3.1-70b --ttft 1s --tpot 30ms --devices h100,b200 --gpus 8 --plot pareto.svg
  gpucalc deploy batch --input deployments.csv --format csv`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, a []string) error {
			opts.q.Model = a[0]
			return execute(opts, runF, deployRun)
		},
	}
	f.addDeviceFlags(cmd, &opts.devices, true)
	f.addChartFlags(cmd, &opts.chart, "the SLA search's Pareto front (tokens/s per GPU against per user)", chart.DefaultSize)
	fl := cmd.Flags()
	opts.flags = fl
	fl.StringVar(&opts.q.Engine, "engine", deploy.DefaultEngine, "serving `engine`: "+strings.Join(deploy.Engines(), ", "))
	fl.Int64Var(&opts.q.TP, "tp", 1, "tensor-parallel `GPUs` of one replica")
	fl.Int64Var(&opts.q.DP, "dp", 1, "`replicas` (data parallel), each serving its share of the clients")
	fl.Int64Var(&opts.q.EP, "ep", 0, "a MoE model's expert-parallel `GPUs`: its experts split over them (default 1; with --dp the replicas share the experts, attention data parallel)")
	fl.Int64Var(&opts.q.MoETP, "moe-tp", 0, "tensor-parallel `GPUs` of each expert (default --tp, or tp × dp / ep with --ep)")
	fl.StringVar(&opts.q.Weights, "weights", "", "linear weights' `type`: bf16, fp8, fp4 or int4 (default: the config's quantization_config, else bf16)")
	fl.StringVar(&opts.q.KV, "kv", "", "KV cache `type`: bf16 or fp8 (default bf16)")
	fl.Int64Var(&opts.q.ISL, "isl", deploy.DefaultISL, "input `tokens` of every request")
	fl.Int64Var(&opts.q.OSL, "osl", deploy.DefaultOSL, "output `tokens` of every request")
	fl.Float64Var(&opts.q.RangeRatio, "range-ratio", 1, "each request's lengths drawn uniformly from this `share` of --isl and --osl up to them, as a benchmark's random dataset (InferenceMAX: 0.8; 1: every request of --isl and --osl)")
	fl.Int64Var(&opts.q.Concurrency, "concurrency", 0, "closed-loop `clients`, each sending its next request when its last ends (default 16 unless --rate)")
	fl.Float64Var(&opts.q.Rate, "rate", 0, "open-loop Poisson `requests/s` instead of --concurrency")
	fl.Int64Var(&opts.q.Requests, "requests", 0, "`requests` the benchmark sends (default 10 per client, or 200 at a rate)")
	fl.Int64Var(&opts.q.MaxTokens, "max-tokens", 0, "the engine's token budget of one step (`tokens`; default: the engine's)")
	fl.Int64Var(&opts.q.MaxSeqs, "max-seqs", 0, "the most `sequences` running at once (default: the engine's)")
	fl.Float64Var(&opts.q.MemoryShare, "gpu-memory-utilization", 0, "the engine's `share` of GPU memory (default: the engine's)")
	fl.StringVar(&opts.ttft, "ttft", "", "search for the deployments whose mean TTFT is at most this `duration` (2s, 500ms), over --devices, parallelism and concurrency")
	fl.StringVar(&opts.tpot, "tpot", "", "search for the deployments whose mean TPOT is at most this `duration` (50ms)")
	fl.Int64Var(&opts.gpus, "gpus", 0, "with --ttft/--tpot: every deployment's `GPUs`, aggregated (tp × replicas) or disaggregated (default: one replica of 1, 2, 4 or 8); with --disagg: the GPUs in all, split between the workers (the split of most tokens/s when neither count is given)")
	fl.BoolVar(&opts.disagg, "disagg", false, "serve with separate prefill and decode workers, the KV cache sent over --link")
	fl.Int64Var(&opts.d.PrefillTP, "prefill-tp", 0, "with --disagg: tensor-parallel `GPUs` of a prefill worker (default --tp)")
	fl.Int64Var(&opts.d.PrefillWorkers, "prefill-workers", 0, "with --disagg: prefill `workers` (default 1)")
	fl.Int64Var(&opts.d.PrefillDP, "prefill-dp", 0, "with --disagg: attention data-parallel `ranks` of a prefill worker (default 1)")
	fl.Int64Var(&opts.d.PrefillEP, "prefill-ep", 0, "with --disagg: expert-parallel `GPUs` of a prefill worker (default 1)")
	fl.Int64Var(&opts.d.PrefillMoETP, "prefill-moe-tp", 0, "with --disagg: tensor-parallel `GPUs` of each expert in a prefill worker")
	fl.Int64Var(&opts.d.DecodeTP, "decode-tp", 0, "with --disagg: tensor-parallel `GPUs` of a decode worker (default --tp)")
	fl.Int64Var(&opts.d.DecodeWorkers, "decode-workers", 0, "with --disagg: decode `workers`, the clients spread over them (default 1)")
	fl.Int64Var(&opts.d.DecodeDP, "decode-dp", 0, "with --disagg: attention data-parallel `ranks` of a decode worker (default 1)")
	fl.Int64Var(&opts.d.DecodeEP, "decode-ep", 0, "with --disagg: expert-parallel `GPUs` of a decode worker (default 1)")
	fl.Int64Var(&opts.d.DecodeMoETP, "decode-moe-tp", 0, "with --disagg: tensor-parallel `GPUs` of each expert in a decode worker")
	fl.StringVar(&opts.d.Link, "link", "", "with --disagg: the KV cache's `link`: nvlink, nvl72, ib or roce (default nvlink up to 8 GPUs, else ib)")
	_ = cmd.RegisterFlagCompletionFunc("link", cobra.FixedCompletions(deploy.Links, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("engine", cobra.FixedCompletions(deploy.Engines(), cobra.ShellCompDirectiveNoFileComp))
	for _, n := range []string{"weights", "kv"} {
		_ = cmd.RegisterFlagCompletionFunc(n, cobra.FixedCompletions([]string{"bf16", "fp8", "fp4", "int4"}, cobra.ShellCompDirectiveNoFileComp))
	}
	cmd.AddCommand(newCmdDeployBatch(f, nil))
	return cmd
}

func deployRun(opts *deployOptions) error {
	f := opts.f
	form, err := f.OutFormat(nil, &opts.chart)
	if err != nil {
		return err
	}
	if err := notZero(opts.flags, deployDefaulted...); err != nil {
		return err
	}
	if opts.ttft != "" || opts.tpot != "" {
		return deploySearchRun(opts, form)
	}
	if opts.devices.devicesSet() || opts.gpus != 0 && !opts.disagg || opts.chart.file != "" {
		return usagef("--devices, --gpus and --plot are the SLA search's: give --ttft or --tpot (or --gpus with --disagg)")
	}
	t, err := f.Device(opts.devices) // a bad name fails before any work
	if err != nil {
		return err
	}
	q := opts.q
	q.Device = t.Key()
	if opts.disagg {
		d := opts.d
		d.GPUs = opts.gpus
		q.Disagg = &d
	} else if opts.d != (deploy.Disagg{}) {
		return usagef("--prefill-*, --decode-* and --link need --disagg")
	}
	c, err := f.loadModel(q.Model)
	if err != nil {
		return err
	}
	q.Config = &c
	if err := q.Validate().Err(); err != nil {
		return usageError{err}
	}
	r, err := q.Answer()
	if err != nil {
		return err
	}
	return f.Output(form, nil, nil, reports.DeployView{Result: r},
		func() []reports.Table { return reports.DeployTables(r, t.Origin) },
		func() []reports.Table { return reports.DeployRecords(r) })
}

// deploySearchRun is the SLA search (--ttft, --tpot).
func deploySearchRun(opts *deployOptions, form reports.Format) error {
	f := opts.f
	s := deploy.Search{Base: opts.q, GPUs: opts.gpus}
	if opts.disagg {
		return usagef("--disagg answers one deployment; the search tries disaggregated ones itself with --gpus")
	}
	for _, x := range []struct {
		flag, v string
		dst     *float64
	}{{"--ttft", opts.ttft, &s.TTFT}, {"--tpot", opts.tpot, &s.TPOT}} {
		if x.v == "" {
			continue
		}
		v, err := units.ParseDuration(x.v)
		if err != nil {
			return usagef("%s: %w", x.flag, err)
		}
		*x.dst = v
	}
	ts, err := f.Devices(opts.devices)
	if err != nil {
		return err
	}
	for _, t := range ts {
		s.Devices = append(s.Devices, t.Device.Name)
	}
	c, err := f.loadModel(s.Base.Model)
	if err != nil {
		return err
	}
	s.Base.Config = &c
	if err := s.Validate().Err(); err != nil {
		return usageError{err}
	}
	show := f.progress("searching deployments")
	r, err := s.Answer(func(done, total int) { show(float64(done) / float64(total)) })
	if err != nil {
		return err
	}
	notes, err := opts.chart.draw(func() (chart.Chart, error) { return reports.DeployParetoChart(r), nil })
	if err != nil {
		return err
	}
	return f.Output(form, nil, notes, reports.DeploySearchView{SearchResult: r},
		func() []reports.Table { return reports.DeploySearchTables(r) },
		func() []reports.Table { return reports.DeploySearchRecords(r) })
}
