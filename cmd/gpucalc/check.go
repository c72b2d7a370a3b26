package main

import (
	"fmt"
	"io"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/ops"
	"github.com/gpucalc/gpucalc/query"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/review"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/train"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type checkOptions struct {
	f        *factory
	devices  deviceFlags
	failOn   string
	workload string
	section  sectionFlag
	// model and shape review a model's step instead of a workload file.
	model string
	shape model.Shape
	// train reviews a training step (--phase train) of seq tokens per
	// sequence.
	train trainOptions
	flags *pflag.FlagSet // which flags were given
	seq   int64
}

func newCmdCheck(f *factory, runF func(*checkOptions) error) *cobra.Command {
	opts := &checkOptions{f: f}
	cmd := &cobra.Command{
		Use:   "check (WORKLOAD.yaml|- | --model MODEL)",
		Short: "Design-review checks of a workload on a device",
		Long: `Review a workload (a YAML list of ops, such as one transformer layer) on a
device: each op's bound, lower-bound and expected time and share of the total,
then findings, each with a severity, the numbers behind it and the fix:

  fusion             memory-bound elementwise ops and norms standing alone after
                     a producer: the bytes and time a fused epilogue saves
  gemm_alignment     GEMM dimensions that are not multiples of 16 bytes (on an
                     H100, bf16 4095³ ran 4.7× slower than 4096³)
  wave_quantization  GEMM tiles against SMs: the idle share of edge tiles and
                     of the last wave
  launch_overhead    ops so small that the launch costs more than their work
  low_utilization    the workload's share of time below 10% of the compute peak
  memory_capacity    working sets beyond device memory (memory: in the file)
  host_transfer      data crossing the host link (transfers: in the file)
  device_peaks       device peaks that look 2:4-sparse, or break
                     peak = SMs × clock × rate per SM
  occupancy, spills, low_occupancy, coalescing, bank_conflicts
                     kernels the file describes (kernel: under an op)

With --model (a built-in name or a config.json, see 'gpucalc model'), the
workload is one prefill or decode step of that model (--phase, --batch,
--prompt, --ctx, --tp), and three more checks run:
  kv_cache_size      the KV cache larger than the weights on each GPU
  gqa_expansion      what repeating KV heads before attention would cost
  tp_allreduce       the tensor-parallel all-reduces' share of the step
With --phase train the workload is a training step (see 'gpucalc train':
--batch sequences of --seq tokens, --method, --precision, --ckpt, --gpus,
--zero, --bucket-view, --tp) and the checks are:
  memory_capacity    the step does not fit, and the smallest change that does
  ddp_rebuild        only the steady step fits: DDP's second may not
  allocator_headroom it fits with less room than its largest tensor
  checkpointing      checkpointing would fit a micro-batch twice as large
  logits_memory      the logits and the loss's fp32 buffers dominate the peak
  optimizer_memory   optimizer states dominate the peak (ZeRO, 8-bit states)
  launch_overhead    the GPU waits for the host: kernels, collectives, FSDP2
                     modules, ZeRO broadcasts, DTensor, checkpointing (each
                     cause named with its fix)
  dp_communication   data-parallel communication not hidden under compute
                     (fix: micro-batch, bucket sizes, reshard_after_forward,
                     overlapping the optimizer)

Severities: error (cannot run as described, or a number is wrong), warning
(the fix saves at least 1% of the expected time, or a kernel misses its
hardware's limits), info. Times are seconds per run of the workload; sizes
binary (MiB), rates decimal (TB/s). WORKLOAD is a file, or - for standard input.

--format html writes one self-contained page (inline SVG charts, no network).
--fail-on error|warning exits with status 1 when a finding of that severity (or
worse) is found, for CI.

` + ops.WorkloadSchema + `

` + ops.DesignSchema + `

` + ops.SpecHelp,
		Example: `  gpucalc check examples/llama3-8b-decode.yaml
  gpucalc check examples/llama3-8b-prefill.yaml --device h100 --format markdown
  gpucalc check examples/resnet50-bottleneck.yaml --devices h100,a100,l40s
  gpucalc check block.yaml --format html > review.html
  gpucalc check block.yaml --fail-on error
  gpucalc check --model llama-3.1-8b --batch 64 --ctx 4096
  gpucalc check --model llama-3.1-70b --tp 4 --batch 32 --ctx 8192
  gpucalc check --model llama-3.1-8b --phase train --batch 4 --seq 4096 --method lora`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			switch {
			case len(argv) == 1 && opts.model != "":
				return usagef("give a workload file or --model, not both")
			case len(argv) == 0 && opts.model == "":
				return usagef("give a workload file (or - for standard input), or --model MODEL")
			case len(argv) == 1:
				opts.workload = argv[0]
			}
			return execute(opts, runF, checkRun)
		},
	}
	f.addDeviceFlags(cmd, &opts.devices, true)
	cmd.Flags().StringVar(&opts.failOn, "fail-on", "", "exit 1 when a finding of this `severity` or worse is found: error or warning")
	f.addSectionFlag(cmd, &opts.section, nil, "summary", "ops", "findings")
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{"error", "warning"}, cobra.ShellCompDirectiveNoFileComp))
	fl := cmd.Flags()
	opts.flags = fl
	fl.StringVar(&opts.model, "model", "", "review a step of this `model` (built-in name or config.json) instead of a workload file")
	fl.StringVar((*string)(&opts.shape.Phase), "phase", string(model.Decode), "with --model: `prefill`, decode or train")
	fl.StringVar(&opts.train.method, "method", string(train.DefaultMethod), "with --phase train: `full` or lora")
	fl.StringVar(&opts.train.prec, "precision", string(train.DefaultPrecision), "with --phase train: `bf16` or mixed")
	fl.StringVar(&opts.train.ckpt, "ckpt", string(train.DefaultCkpt), "with --phase train: activation checkpointing, `none` or full")
	fl.Int64Var(&opts.train.req.GPUs, "gpus", train.DefaultGPUs, "with --phase train: `GPUs` in all")
	fl.Int64Var(&opts.train.req.ZeRO, "zero", train.DefaultZeRO, "with --phase train: ZeRO `stage` 0 to 3")
	fl.BoolVar(&opts.train.req.BucketView, "bucket-view", false, "with --phase train: DDP with gradient_as_bucket_view=True")
	fl.Int64Var(&opts.shape.Batch, "batch", model.DefaultBatch, "with --model: `sequences` in the batch")
	fl.Int64Var(&opts.shape.Seq, "prompt", model.DefaultPrompt, "with --model: prompt `tokens` per sequence (prefill)")
	fl.Int64Var(&opts.seq, "seq", train.DefaultSeq, "with --phase train: `tokens` per sequence")
	fl.Int64Var(&opts.shape.Ctx, "ctx", model.DefaultPrompt, "with --model: `tokens` in the KV cache (decode)")
	fl.Int64Var(&opts.shape.TP, "tp", 1, "with --model: tensor-parallel `GPUs`")
	_ = cmd.RegisterFlagCompletionFunc("phase", cobra.FixedCompletions([]string{"prefill", "decode", "train"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func checkRun(opts *checkOptions) error {
	f := opts.f
	form, err := f.OutFormat([]reports.Format{reports.FormatTable, reports.FormatMarkdown, reports.FormatJSON, reports.FormatCSV, reports.FormatHTML})
	if err != nil {
		return err
	}
	fail, err := failSeverity(opts.failOn)
	if err != nil {
		return err
	}
	if err := opts.flagsApply(); err != nil {
		return err
	}
	var w ops.Workload
	var cfg model.Config
	if opts.model != "" {
		if cfg, err = f.loadModel(opts.model); err != nil {
			return err
		}
	} else if w, err = f.ReadWorkload(opts.workload); err != nil {
		return err
	}
	ts, err := f.Devices(opts.devices)
	if err != nil {
		return err
	}
	builtin, err := devices.Builtin()
	if err != nil {
		return err
	}
	rv := reports.Review{Origin: ts[0].Origin}
	for _, t := range ts {
		var r review.Report
		if opts.shape.Phase == "train" && opts.model != "" {
			if r, err = opts.trainReview(cfg, t.Device); err != nil {
				return err
			}
		} else if opts.model != "" {
			r, err = review.CheckModel(cfg, opts.shape, t.Device, builtin.Devices())
			if err != nil {
				return usageError{fmt.Errorf("--model %s: %w", opts.model, err)}
			}
		} else if r, err = review.Check(w, t.Device, builtin.Devices()); err != nil {
			return err
		}
		rv.Reports = append(rv.Reports, r)
	}
	err = f.Output(form, &opts.section, nil, reviewPage{rv},
		func() []reports.Table { return reports.ReviewTables(rv) },
		func() []reports.Table { return reports.ReviewRecords(rv) })
	if err != nil {
		return err
	}
	return failed(rv, fail)
}

// reviewPage is the review's view: its JSON, and its HTML page.
type reviewPage struct{ reports.Review }

func (p reviewPage) HTML(w io.Writer) error { return reports.ReviewHTML(w, p.Review) }

func failSeverity(s string) (review.Severity, error) {
	switch s {
	case "":
		return "", nil
	case string(review.Error), string(review.Warning):
		return review.Severity(s), nil
	}
	return "", usageError{fmt.Errorf("--fail-on %q: expected error or warning", s)}
}

// failed returns an error when a report has a finding at severity fail or
// worse.
func failed(rv reports.Review, fail review.Severity) error {
	if fail == "" {
		return nil
	}
	n := 0
	for _, r := range rv.Reports {
		n += r.Count(review.Error)
		if fail == review.Warning {
			n += r.Count(review.Warning)
		}
	}
	if n > 0 {
		return fmt.Errorf("check failed: %d finding(s) of severity %s or worse", n, fail)
	}
	return nil
}

// flagsApply refuses a flag given where it does not apply: the model's
// flags without --model, the training flags outside --phase train, the
// KV cache's --ctx in a training step; and a phase that is none of three.
func (opts *checkOptions) flagsApply() error {
	fs := opts.flags
	if err := onlyWith(fs, opts.model != "", "--model", "phase", "batch", "prompt", "seq", "ctx", "tp"); err != nil {
		return err
	}
	switch opts.shape.Phase {
	case model.Prefill, model.Decode, "train":
	default:
		return usagef("--phase %s: expected prefill, decode or train", query.Quote(string(opts.shape.Phase)))
	}
	train := opts.shape.Phase == "train"
	// Each phase takes the length flag of its own command: train's --seq,
	// model's --prompt.
	switch {
	case train && fs.Changed("prompt"):
		return usagef("--phase train takes --seq (tokens per sequence, as 'gpucalc train' does), not --prompt")
	case !train && fs.Changed("seq"):
		return usagef("--seq is the training step's sequence length (--phase train); a %s step takes --prompt and --ctx", opts.shape.Phase)
	}
	if err := onlyWith(fs, train, "--phase train", "method", "precision", "ckpt", "gpus", "zero", "bucket-view"); err != nil {
		return err
	}
	return onlyWith(fs, !train, "--phase decode", "ctx")
}

// trainReview reviews a training step (--phase train) of cfg on d.
func (opts *checkOptions) trainReview(cfg model.Config, d devices.Device) (review.Report, error) {
	o := opts.train
	tq := train.NewQuery(opts.model)
	tq.Method, tq.Precision, tq.Ckpt = o.method, o.prec, o.ckpt
	tq.Batch, tq.Seq, tq.TP, tq.GPUs, tq.ZeRO, tq.BucketView = opts.shape.Batch, opts.seq, opts.shape.TP, o.req.GPUs, o.req.ZeRO, o.req.BucketView
	q, err := tq.Request()
	if err != nil {
		return review.Report{}, usage(err)
	}
	m, err := roofline.New(d)
	if err != nil {
		return review.Report{}, err
	}
	r, err := train.Review(cfg, q, m)
	if err != nil {
		return review.Report{}, usageError{fmt.Errorf("--model %s: %w", opts.model, err)}
	}
	return r, nil
}
