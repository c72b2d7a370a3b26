package train

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/review"
	"github.com/gpucalc/gpucalc/roofline"
	"github.com/gpucalc/gpucalc/units"
)

// Thresholds of the training findings.
const (
	// LogitsShare is the share of the peak from which the logits and the
	// loss's buffers are reported as dominating it.
	LogitsShare = 0.25
	// OptimizerShare is the share of the peak from which optimizer states
	// (with fp32 master weights) are reported.
	OptimizerShare = 0.25
	// CommShare is the share of the step from which data-parallel
	// communication not hidden under compute is reported.
	CommShare = 0.05
	// HostShare is the share of the step from which the GPU's wait for
	// the host is reported, and HostCauseShare the share of the host's
	// time from which a cause of it is named with its fix.
	HostShare      = 0.10
	HostCauseShare = 0.15
)

// Review is the design review of a training step: the step's times as
// review.Report has them (the lower bound is the model FLOPs at the
// datasheet's dense bf16 peak) and the training findings.
func Review(c model.Config, r Request, m *roofline.Model) (review.Report, error) {
	res, err := Analyze(c, r, m)
	if err != nil {
		return review.Report{}, err
	}
	r = res.Request
	rep := review.Report{
		Workload: fmt.Sprintf("%s training step (%s, micro-batch %d × %d)", c.Name, r.Method, r.Batch, r.Seq),
		Device:   res.Device, Notes: res.Notes,
	}
	if t := res.Time; t != nil {
		rep.Expected, rep.LowerBound = t.Step, t.MFU*t.Step
		if peak, err := m.Device().Peak(devices.BF16, devices.Tensor); err == nil {
			rep.FLOPs = rep.LowerBound * peak // the model FLOPs MFU counts
		}
		if rep.Ops, rep.Bytes, err = stepOps(c, r, m, *t); err != nil {
			return review.Report{}, err
		}
	} else {
		rep.NoTime, rep.Ops = "the step does not fit", []review.Op{} // JSON's [], not null
	}
	rep.Findings = Findings(c, res)
	return rep, nil
}

// stepOps is the step's op table: each op of the forward, the backward
// (dX and dW of each matrix product; attention's and the elementwise ops'
// backward) and the recomputed forward, each part's passes (loss, LoRA,
// autocast) by phase, the optimizer and the exposed communication; and the
// ideal bytes of the listed ops.
func stepOps(c model.Config, r Request, m *roofline.Model, t Time) ([]review.Op, float64, error) {
	var log []stepOp
	if _, err := newLayout(c, r).timeLogged(newPricer(m), &log); err != nil {
		return nil, 0, err
	}
	log = append(log, stepOp{Phase: "step", Name: PartOptimizer, Seconds: t.Optimizer})
	if t.Comm > 0 {
		log = append(log, stepOp{Phase: "step", Name: "communication (exposed)", Seconds: t.Comm})
	}
	dram := m.Device().Memory.BytesPerSecond
	var out []review.Op
	var bytes float64
	for _, e := range log {
		o := review.Op{Name: e.Phase + " " + e.Name, Count: max(e.Count, 1), Expected: e.Seconds}
		if e.Op != nil {
			p, err := m.Analyze(*e.Op)
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %w", e.Name, err)
			}
			work := e.Runs * float64(e.Count)
			o.Spec, o.Point, o.LowerBound = e.Op.String(), p, work*p.LowerBound
			bytes += work * p.Bytes
			if e.Seconds > 0 && p.ComputeCeiling > 0 {
				o.PeakFraction = work * p.FLOPs / e.Seconds / p.ComputeCeiling
				o.BandwidthFraction = work * p.Bytes / e.Seconds / dram
			}
		}
		if t.Step > 0 {
			o.Share = e.Seconds / t.Step
		}
		out = append(out, o)
	}
	return out, bytes, nil
}

// Findings are what a training step's result suggests, the most severe
// first: it does not fit (and the smallest change that does), the logits
// dominate the peak (chunked cross-entropy), the optimizer states do (ZeRO,
// 8-bit states), the CPU's launches set the pace, communication is not
// hidden, checkpointing would buy a larger micro-batch.
func Findings(c model.Config, res Result) []review.Finding {
	var out []review.Finding
	m, r := res.Memory, res.Request
	t := res.Time
	if t == nil {
		t = &Time{} // a step that does not fit has no time to review
	}
	size := func(b float64) string { return units.FormatSize(int64(b)) }
	if !m.Fits {
		fix := "no single change fits: combine checkpointing, LoRA and ZeRO-3 over more GPUs"
		if len(res.Changes) > 0 {
			fix = res.Changes[0].What + fmt.Sprintf(" (peak %s)", size(res.Changes[0].Peak))
		}
		f := review.Finding{Severity: review.Error, Check: "memory_capacity",
			Message: fmt.Sprintf("the step peaks at %s per GPU at %s; %s can allocate %s.", size(m.Peak), m.At, res.Device, size(m.Usable)),
			Fix:     fix, Numbers: map[string]float64{"peak_bytes": m.Peak, "second_step_peak_bytes": m.SecondStep, "usable_bytes": m.Usable}}
		if m.Verdict == MayNotFit {
			f.Severity, f.Check = review.Warning, "ddp_rebuild"
			f.Message = fmt.Sprintf("the step peaks at %s per GPU from its third step on, but the second may still hold DDP's first buckets (%s) until NCCL's watchdog releases them: %s, where %s can allocate %s. Whether a run fails is a race.",
				size(m.Peak), size(m.Rebuild), size(m.SecondStep), res.Device, size(m.Usable))
		}
		out = append(out, f)
	}
	if m.Tight {
		out = append(out, review.Finding{Severity: review.Warning, Check: "allocator_headroom",
			Message: fmt.Sprintf("the step fits with %s to spare, less than its largest tensor (%d × %d fp32 logits, %s): PyTorch's caching allocator keeps freed blocks split for reuse and may still run out of memory.",
				size(m.Usable-m.SecondStep), r.Tokens(), c.Vocab/r.TP, size(m.Largest)),
			Fix:     "a smaller micro-batch, or PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (segments grow instead of fragmenting)",
			Numbers: map[string]float64{"spare_bytes": m.Usable - m.SecondStep}})
	}
	if share := m.Logits / m.Peak; share >= LogitsShare {
		out = append(out, review.Finding{Severity: review.Warning, Check: "logits_memory",
			Message: fmt.Sprintf("the logits and the loss's fp32 buffers over %d tokens × %d vocabulary hold %s, %.0f%% of the peak (%s).",
				r.Tokens(), c.Vocab, size(m.Logits), 100*share, m.At),
			Fix:     "a chunked or fused linear cross-entropy (Liger's, or a loss over chunks of tokens) never materialises the full-vocabulary fp32 logits",
			Numbers: map[string]float64{"logits_bytes": m.Logits, "share": share}})
	}
	if share := m.Optimizer / m.Peak; share >= OptimizerShare {
		fix := "8-bit optimizer states (bitsandbytes; not modelled) quarter them"
		if r.DP() > 1 && r.ZeRO == 0 {
			fix = fmt.Sprintf("ZeRO-1 (--zero 1) shards them over the %d data-parallel GPUs; ", r.DP()) + fix
		} else if r.DP() == 1 {
			fix = "ZeRO-1 over several GPUs shards them; " + fix
		}
		out = append(out, review.Finding{Severity: review.Warning, Check: "optimizer_memory",
			Message: fmt.Sprintf("optimizer states hold %s, %.0f%% of the peak.", size(m.Optimizer), 100*share),
			Fix:     fix, Numbers: map[string]float64{"optimizer_bytes": m.Optimizer, "share": share}})
	}
	if t.HostShare >= HostShare {
		out = append(out, hostFindings(*t)...)
	}
	if t.Comm > CommShare*t.Step {
		fix := "a larger micro-batch (more compute to hide it under), gradient accumulation (communicate once per accumulated step)"
		switch {
		case r.ZeRO == 3:
			fix += ", or reshard_after_forward=False (--zero 2: backward reuses the forward's gathered parameters instead of gathering them again)"
		case r.ZeRO == 0:
			fix += ", or a larger bucket_cap_mb (fewer, larger all-reduces: the last one waits)"
		case r.ZeRO == 1:
			fix += ", or overlapping the optimizer with backward (ZeroRedundancyOptimizer(overlap_with_ddp=True): each bucket steps and broadcasts as its all-reduce ends)"
		default:
			fix += ", or a lower ZeRO stage"
		}
		out = append(out, review.Finding{Severity: review.Warning, Check: "dp_communication",
			Message: fmt.Sprintf("data-parallel communication takes %s, %s of it not hidden under compute (%.0f%% of the step).",
				units.FormatDuration(t.CommTotal), units.FormatDuration(t.Comm), 100*t.Comm/t.Step),
			Fix:   fix,
			Saves: t.Comm, Numbers: map[string]float64{"comm_seconds": t.CommTotal, "exposed_seconds": t.Comm}})
	}
	if r.Ckpt == NoCkpt {
		n := r
		n.Ckpt = FullCkpt
		if b := MaxBatch(c, n, m.Usable); b > max(res.MaxBatch, 1) && b >= 2*res.MaxBatch {
			out = append(out, review.Finding{Severity: review.Info, Check: "checkpointing",
				Message: fmt.Sprintf("activation checkpointing keeps only each layer's input (%s instead of %s per layer): micro-batch %d fits instead of %d, for one more forward of the layers in backward.",
					size(m.PerLayerCkpt), size(m.PerLayer), b, res.MaxBatch),
				Fix:     "--ckpt full (gradient_checkpointing_enable(use_reentrant=False)) and a larger micro-batch, or fewer accumulation steps",
				Numbers: map[string]float64{"max_batch": float64(res.MaxBatch), "max_batch_ckpt": float64(b)}})
		}
	}
	return out
}

// hostFixes are the fixes for each cause of host time.
var hostFixes = map[string]string{
	HostKernels:     "a larger micro-batch or longer sequences (the same kernels do more work), or torch.compile / CUDA graphs (one launch for many kernels)",
	HostCollectives: "a larger bucket_cap_mb (fewer all-reduces to issue)",
	HostFSDP:        "fewer, larger fully_shard units (several decoder layers each: FSDP2's work is per module, not per byte), and a larger micro-batch",
	HostZeRO:        "ZeroRedundancyOptimizer(parameters_as_bucket_view=True) (one broadcast per bucket, not per tensor), or overlap_with_ddp=True (steps and broadcasts each bucket under backward)",
	HostDTensor:     "a larger micro-batch, or data parallelism alone where the model fits (DTensor's dispatch is per module and pass)",
	HostCheckpoint:  "checkpointing fewer layers, or a larger micro-batch without it",
}

// hostFindings report the GPU's wait for the host: one finding, naming
// each cause that takes a HostCauseShare of the host's time, largest first,
// with its fix.
func hostFindings(t Time) []review.Finding {
	causes := make([]string, 0, len(t.HostBy))
	for k, v := range t.HostBy {
		if v >= HostCauseShare*t.CPU {
			causes = append(causes, k)
		}
	}
	sort.Slice(causes, func(i, j int) bool { return t.HostBy[causes[i]] > t.HostBy[causes[j]] })
	named := make([]string, len(causes))
	fixes := make([]string, len(causes))
	nums := map[string]float64{"host_bound_seconds": t.HostBound, "host_bound_share": t.HostShare,
		"cpu_seconds": t.CPU, "gpu_seconds": t.GPU, "kernels": float64(t.Kernels)}
	for i, k := range causes {
		named[i] = fmt.Sprintf("%s %s", k, units.FormatDuration(t.HostBy[k]))
		fixes[i] = hostFixes[k]
		nums["host_"+k+"_seconds"] = t.HostBy[k]
	}
	return []review.Finding{{Severity: review.Warning, Check: "launch_overhead",
		Message: fmt.Sprintf("the GPU waits %s for the host, %.0f%% of the step: issuing the step's %d kernels and its distributed work eagerly takes %s of host time (%s) against %s of GPU work.",
			units.FormatDuration(t.HostBound), 100*t.HostShare, t.Kernels, units.FormatDuration(t.CPU), strings.Join(named, ", "), units.FormatDuration(t.GPU)),
		Fix:   strings.Join(fixes, "; "),
		Saves: t.HostBound, Numbers: nums}}
}
