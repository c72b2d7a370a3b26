package reports

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/train"
	"github.com/gpucalc/gpucalc/units"
)

// trainSetup says what a request trains, in words.
func trainSetup(q train.Request) string {
	s := string(q.Method)
	if q.Method == train.LoRA {
		s += fmt.Sprintf(" r=%d α=%d (%s)", q.LoRARank, q.LoRAAlpha, strings.Join(q.LoRATargets, ","))
	} else {
		s += " " + string(q.Precision)
	}
	s += ", " + string(q.Optimizer)
	if q.Ckpt == train.FullCkpt {
		s += ", checkpointing"
	}
	s += fmt.Sprintf(", micro-batch %d × %d tokens", q.Batch, q.Seq)
	if q.GPUs > 1 {
		s += fmt.Sprintf(", %d GPUs (tp %d, ZeRO-%d)", q.GPUs, q.TP, q.ZeRO)
	}
	return s
}

// TrainTables are the answer on each device: memory at the peak item by
// item, the verdict, and the step's time.
func TrainTables(rs []train.Result, origin string) []Table {
	var out []Table
	for _, r := range rs {
		out = append(out, trainSummary(r, origin))
	}
	return out
}

func trainSummary(r train.Result, origin string) Table {
	m, t, q := r.Memory, r.Time, r.Request
	title := fmt.Sprintf("%s on %s: %s", r.Model, r.Device, trainSetup(q))
	tb := Table{Title: title, Header: []string{"Quantity", "Value"}}
	row := func(k, v string) { tb.Rows = append(tb.Rows, []string{k, v}) }
	row("parameters", siCount(float64(r.Params.Total))+", "+siCount(float64(r.Params.Trainable))+" trainable")
	for _, it := range m.Items() {
		if it.Bytes > 0 {
			row("  "+it.Name, memSize(it.Bytes))
		}
	}
	verdict := map[train.Verdict]string{train.Fits: "fits", train.DoesNotFit: "DOES NOT FIT",
		train.FitsTightly: "fits, tightly (less room than its largest tensor: the allocator may still fail)",
		train.MayNotFit:   "MAY NOT FIT (a race)"}[m.Verdict]
	if m.Rebuild > 0 {
		row("peak per GPU", gib(m.Peak)+" at "+m.At+" from the third step on")
		row("second step", gib(m.SecondStep)+" with DDP's first buckets ("+gib(m.Rebuild)+") still held, of "+usable(m.Usable)+": "+verdict)
	} else {
		row("peak per GPU", gib(m.Peak)+" at "+m.At+" of "+usable(m.Usable)+": "+verdict)
	}
	row("activations per layer", memSize(m.PerLayer)+" saved; "+memSize(m.PerLayerCkpt)+" with checkpointing")
	mb := "none (not one sequence)"
	if r.MaxBatch > 0 {
		mb = strconv.FormatInt(r.MaxBatch, 10) + " × " + strconv.FormatInt(q.Seq, 10) + " tokens"
	}
	row("largest micro-batch that fits", mb)
	if len(r.Changes) > 0 {
		row("smallest change that fits", r.Changes[0].What+" ("+gib(r.Changes[0].Peak)+")")
	} else if !m.Fits {
		row("smallest change that fits", "none of micro-batch, checkpointing, LoRA, ZeRO or up to 8× the GPUs alone, keeping the global batch")
	}
	if t == nil {
		row("step", notPriced)
	} else {
		trainTimes(row, *t)
	}
	note := "Memory per allocation as PyTorch, transformers (sdpa, full-vocabulary fp32 loss) and peft make it; time: kernels at measured ceilings, each phase at least the host's time to issue it (" + units.FormatDuration(train.TrainCPUPerKernel) + " a kernel, and the collectives', FSDP2's, ZeroRedundancyOptimizer's, DTensor's and checkpointing's work measured per unit)."
	if origin != "" {
		note += " Device: " + origin + "."
	}
	tb.Notes = append(tb.Notes, note)
	tb.Notes = append(tb.Notes, r.Notes...)
	if len(tb.Notes) > 2 {
		tb.Notes = append(tb.Notes[:1], strings.Join(tb.Notes[1:], " "))
	}
	return tb
}

// trainTimes adds the step's time rows.
func trainTimes(row func(k, v string), t train.Time) {
	step := units.FormatDuration(t.Step)
	if t.LaunchBound {
		step += " (launch-bound: " + units.FormatDuration(t.GPU) + " GPU, " + strconv.Itoa(t.Kernels) + " kernels launched eagerly)"
	} else {
		step += " (" + strconv.Itoa(t.Kernels) + " kernels)"
	}
	row("step", step)
	fb := "forward " + units.FormatDuration(t.Forward) + ", backward " + units.FormatDuration(t.Backward)
	if t.Recompute > 0 {
		fb += " (" + units.FormatDuration(t.Recompute) + " recomputing)"
	}
	row("  phases", fb+", optimizer "+units.FormatDuration(t.Optimizer))
	if t.CommTotal > 0 {
		row("  data-parallel communication", units.FormatDuration(t.CommTotal)+", "+units.FormatDuration(t.Comm)+" not hidden under compute")
	}
	if t.HostBound > 0 {
		row("  host-bound", fmt.Sprintf("%s (%.0f%% of the step) the GPU waits for the host; host %s: %s",
			units.FormatDuration(t.HostBound), 100*t.HostShare, units.FormatDuration(t.CPU), hostCauses(t)))
	}
	row("dominated by", t.Dominant+" ("+trainShares(t)+")")
	row("tokens/s", strconv.FormatFloat(t.TokensPerSecond, 'f', 0, 64)+fmt.Sprintf(", MFU %.1f%%", 100*t.MFU))
}

// hostCauses lists the host's time by cause, largest first.
func hostCauses(t train.Time) string {
	keys := make([]string, 0, len(t.HostBy))
	for k := range t.HostBy {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return t.HostBy[keys[i]] > t.HostBy[keys[j]] || t.HostBy[keys[i]] == t.HostBy[keys[j]] && keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + units.FormatDuration(t.HostBy[k])
	}
	return strings.Join(parts, ", ")
}

// trainShares lists the parts of the step's GPU time, largest first.
func trainShares(t train.Time) string {
	keys := make([]string, 0, len(t.By))
	var total float64
	for k, v := range t.By {
		if v > 0 {
			keys = append(keys, k)
			total += v
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		return t.By[keys[i]] > t.By[keys[j]] || t.By[keys[i]] == t.By[keys[j]] && keys[i] < keys[j]
	})
	var parts []string
	for _, k := range keys[:min(4, len(keys))] {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", k, 100*t.By[k]/total))
	}
	return strings.Join(parts, ", ")
}

// TrainRecords is one CSV record per device.
func TrainRecords(rs []train.Result) []Table {
	t := Table{Key: "train", Header: []string{"model", "device", "method", "precision", "optimizer", "ckpt", "batch", "seq", "gpus", "tp", "zero",
		"params", "trainable_params", "weights_bytes", "grads_bytes", "optimizer_bytes", "autocast_copies_bytes", "activations_bytes",
		"logits_bytes", "transient_bytes", "other_bytes", "peak_bytes", "peak_at", "ddp_rebuild_bytes", "second_step_peak_bytes", "usable_bytes", "fits", "verdict",
		"max_batch", "change",
		"forward_seconds", "backward_seconds", "recompute_seconds", "optimizer_seconds", "comm_exposed_seconds", "gpu_seconds", "step_seconds", "kernels", "launch_bound",
		"tokens_per_second", "mfu", "dominant"}}
	for _, r := range rs {
		m, x, q := r.Memory, r.Time, r.Request
		change := ""
		if len(r.Changes) > 0 {
			change = r.Changes[0].What
		}
		row := []string{r.Model, r.Device, string(q.Method), string(q.Precision), string(q.Optimizer), string(q.Ckpt),
			i64(q.Batch), i64(q.Seq), i64(q.GPUs), i64(q.TP), i64(q.ZeRO),
			i64(r.Params.Total), i64(r.Params.Trainable), num(m.Weights), num(m.Grads), num(m.Optimizer), num(m.Copies), num(m.Activations),
			num(m.Logits), num(m.Transient), num(m.Other), num(m.Peak), m.At, num(m.Rebuild), num(m.SecondStep), num(m.Usable), boolean(m.Fits), string(m.Verdict),
			i64(r.MaxBatch), change}
		if x != nil {
			row = append(row, num(x.Forward), num(x.Backward), num(x.Recompute), num(x.Optimizer), num(x.Comm), num(x.GPU), num(x.Step),
				integer(x.Kernels), boolean(x.LaunchBound), num(x.TokensPerSecond), num(x.MFU), x.Dominant)
		} else { // no times for what does not fit
			row = append(row, make([]string, 12)...)
		}
		t.Rows = append(t.Rows, row)
	}
	return []Table{t}
}

// TrainBatchOut are the columns train batch appends to its input. Each
// name means what train's JSON means by it: grads_held_bytes are every
// gradient as held at the end of backward, activations_saved_bytes what
// the forward saves for backward (train's grads_bytes and
// activations_bytes are those alive at the peak, which train itemises).
var TrainBatchOut = []string{"params", "trainable_params", "weights_bytes", "grads_held_bytes", "optimizer_bytes", "activations_saved_bytes",
	"peak_bytes", "fits", "verdict", "step_ms", "tokens_per_s", "mfu", "error"}
