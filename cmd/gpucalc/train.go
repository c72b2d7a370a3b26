package main

import (
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/train"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type trainOptions struct {
	f       *factory
	flags   *pflag.FlagSet // which flags were given
	devices deviceFlags
	model   string
	name    string
	req     train.Request
	method  string
	prec    string
	opt     string
	ckpt    string
	targets string
}

const trainHow = `Memory per GPU at the step's peak, counted per allocation: weights,
gradients and optimizer states (bf16: 2+2+4 bytes per parameter; mixed: fp32
master weights, fp32 AdamW, 4+4+8, and autocast's bf16 copies of the weights
made per forward; LoRA: the base in bf16, peft's adapters and their AdamW
states in fp32); what autograd saves for backward in transformers' sdpa
layers (RMSNorm's fp32 copy, projections' inputs, q/k/v and the attention
output through flash attention, the MLP's gate, up and product; LoRA's fp32
input casts), or with checkpointing each layer's input and the layer being
recomputed; the full-vocabulary logits with the loss's fp32 buffers; the
backward's transients. The step is followed from the forward's loss through
each backward phase to the optimizer, and the peak is the largest moment.
Usable memory is what PyTorch's allocator can have: what CUDA can allocate
(79.2 GiB of an 80 GiB H100) less the CUDA context (0.60 GiB) and, on more
than one GPU, NCCL's communicator (0.96 GiB), both measured.
ZeRO shards optimizer states (1), gradients (2) and parameters (3) over the
data-parallel GPUs (gpus / tp); tp splits heads, MLP and vocabulary. Under
DDP (zero 0 or 1) a run's second step may still hold the first step's
buckets, one more copy of the gradients, until NCCL's watchdog releases
them (a race, measured both ways); --bucket-view (gradient_as_bucket_view)
has none. The verdict: fits; fits_tightly (less room than the largest
tensor: PyTorch's allocator may still fail); may_not_fit (only the second
step does not fit); does_not_fit.

Time: transformers' eager forward (model's op list: RMSNorm as eight
kernels, rotary, flash attention, the LM head over every position, the fp32
cross-entropy), backward as dX and dW GEMMs (dX only for a frozen base),
FlashAttention-2's backward at 2.5× its forward, elementwise at 2×, plus one
forward of the layers with checkpointing; peft's fp32 adapters and
autocast's casts; fused AdamW as memory-bound passes; each op at the
roofline's measured ceilings. Data-parallel gradients are all-reduced
(DDP) or reduce-scattered and parameters all-gathered (ZeRO, FSDP) on the
NCCL curve, overlapped with backward (and forward) as those frameworks do.
Each phase takes at least the host's time to issue it, measured on the
reference hosts: 38 µs a training kernel, 45 µs a collective, and per
unit FSDP2's modules, ZeroRedundancyOptimizer's tensors, DTensor's modules
and checkpointing's layers; the output gives the time the GPU waits for
the host and its causes, and a step whose launches outlast its GPU work
is flagged launch-bound.

Not modelled: pipeline parallelism, CPU/NVMe offload, 8-bit optimizer
states, sequence parallelism, chunked or fused cross-entropy (Liger),
QLoRA's 4-bit base, MoE and MLA layers, Gemma and Phi-3 layouts, networks
between hosts.`

func newCmdTrain(f *factory, runF func(*trainOptions) error) *cobra.Command {
	opts := &trainOptions{f: f}
	cmd := &cobra.Command{
		Use:   "train MODEL",
		Short: "Will a fine-tune fit, how long is a step, and what dominates it",
		Long: `Answer for fine-tuning a decoder-only LLM (a built-in name, a Hugging Face id
or a config.json, as 'gpucalc model' takes): the memory per GPU at the
training step's peak, item by item, whether it fits, the largest
micro-batch that fits and the smallest change that makes it fit
(checkpointing, LoRA, a ZeRO stage, more GPUs); the step's time (forward,
backward, optimizer, data-parallel communication), tokens per second, MFU
and what dominates the step.

` + trainHow,
		Example: `  gpucalc train llama-3.1-8b --method lora --batch 4 --seq 4096
  gpucalc train llama-3.1-8b --batch 4 --seq 1024 --ckpt full
  gpucalc train llama-3.2-1b --precision mixed --batch 8 --seq 2048 --devices h100,h200
  gpucalc train llama-3.1-70b --gpus 8 --zero 3 --ckpt full --precision mixed
  gpucalc train llama-3.2-1b --precision mixed --batch 4 --seq 4096 --gpus 2 --bucket-view
  gpucalc train path/to/config.json --method lora --lora-rank 64 --lora-targets q,v`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, a []string) error {
			opts.model = a[0]
			return execute(opts, runF, trainRun)
		},
	}
	f.addDeviceFlags(cmd, &opts.devices, true)
	fl := cmd.Flags()
	opts.flags = fl
	fl.StringVar(&opts.method, "method", string(train.DefaultMethod), "what to train: `full` or lora")
	fl.Int64Var(&opts.req.LoRARank, "lora-rank", train.DefaultRank, "LoRA `rank`")
	fl.Int64Var(&opts.req.LoRAAlpha, "lora-alpha", train.DefaultAlpha, "LoRA `alpha` (scales the adapters; no memory or time of its own)")
	fl.StringVar(&opts.targets, "lora-targets", train.DefaultTargets, "LoRA `projections`: all-linear, or a list of q,k,v,o,gate,up,down")
	fl.StringVar(&opts.prec, "precision", string(train.DefaultPrecision), "`bf16` (weights, gradients, AdamW states in bf16) or mixed (fp32 master weights under bf16 autocast, fp32 AdamW)")
	fl.StringVar(&opts.opt, "optimizer", string(train.DefaultOptimizer), "`optimizer`: adamw (fused) or sgd (no momentum)")
	fl.StringVar(&opts.ckpt, "ckpt", string(train.DefaultCkpt), "activation checkpointing of every decoder layer: `none` or full")
	fl.Int64Var(&opts.req.Batch, "batch", train.DefaultBatch, "micro-batch per GPU, `sequences`")
	fl.Int64Var(&opts.req.Seq, "seq", train.DefaultSeq, "`tokens` per sequence")
	fl.Int64Var(&opts.req.GPUs, "gpus", train.DefaultGPUs, "`GPUs` in all (data parallel × tensor parallel)")
	fl.Int64Var(&opts.req.ZeRO, "zero", train.DefaultZeRO, "ZeRO/FSDP `stage` over the data-parallel GPUs: 0, 1 (optimizer states), 2 (and gradients), 3 (and parameters)")
	fl.Int64Var(&opts.req.TP, "tp", train.DefaultTP, "tensor-parallel `GPUs` of one host")
	fl.BoolVar(&opts.req.BucketView, "bucket-view", false, "DDP with gradient_as_bucket_view=True (zero 0 or 1): gradients are views of the all-reduce buckets")
	fl.StringVar(&opts.name, "name", "", nameHelp)
	for flag, vals := range map[string][]string{"method": {"full", "lora"}, "precision": {"bf16", "mixed"}, "optimizer": {"adamw", "sgd"}, "ckpt": {"none", "full"}} {
		_ = cmd.RegisterFlagCompletionFunc(flag, cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp))
	}
	cmd.AddCommand(newCmdTrainBatch(f, nil))
	return cmd
}

// query maps the argument and flags onto the train question, reading the
// config file the argument names.
func (opts *trainOptions) query() (train.Query, error) {
	f := opts.f
	if err := onlyWith(opts.flags, opts.method == string(train.LoRA), "--method lora", "lora-rank", "lora-alpha", "lora-targets"); err != nil {
		return train.Query{}, err
	}
	c, err := f.Catalog()
	if err != nil {
		return train.Query{}, err
	}
	name, data, err := f.modelSource(opts.model)
	if err != nil {
		return train.Query{}, err
	}
	r := opts.req
	return train.Query{Model: name, Config: data, Name: opts.name, Devices: f.choice(opts.devices),
		Method: opts.method, Precision: opts.prec, Optimizer: opts.opt, Ckpt: opts.ckpt,
		Batch: r.Batch, Seq: r.Seq, GPUs: r.GPUs, TP: r.TP, ZeRO: r.ZeRO, BucketView: r.BucketView,
		LoRARank: r.LoRARank, LoRAAlpha: r.LoRAAlpha, LoRATargets: opts.targets, Catalog: c, Datasheet: f.datasheet}, nil
}

func trainRun(opts *trainOptions) error {
	f := opts.f
	form, err := f.OutFormat(nil)
	if err != nil {
		return err
	}
	q, err := opts.query()
	if err != nil {
		return err
	}
	a, err := q.Answer()
	if err != nil {
		return usage(err)
	}
	rs := a.Results
	var view any = rs
	if len(rs) == 1 {
		view = rs[0]
	}
	return f.Output(form, nil, nil, view,
		func() []reports.Table { return reports.TrainTables(rs, a.Devices[0].Origin) },
		func() []reports.Table { return reports.TrainRecords(rs) })
}
