package train

import "math"

// The host's side of an eager training step: Python, autograd and the
// PyTorch dispatcher issue every kernel and collective, and the distributed
// wrappers add their own work per wrapped module or tensor. Each figure is
// the host time per unit of work, measured on the H100 hosts the training
// rows came from (PyTorch 2.11, transformers 5.17, NCCL 2.28; the tests
// recompute each one from its measurements), not per model.
const (
	// TrainCPUPerKernel is the host's time per kernel of an eager training
	// step (the forward records autograd's graph, backward runs autograd's
	// engine): the median of step / kernels over the ground truth's
	// single-GPU rows whose GPU time is under half the step
	// (testdata/train_h100.csv, TestTrainCPUPerKernel). Twice an inference
	// launch's (model.EagerCPUPerKernel).
	TrainCPUPerKernel = 38.2e-6
	// CollectiveIssue is the host's time to issue one NCCL collective
	// through torch.distributed: the median over all-reduce, all-gather,
	// reduce-scatter and broadcast of 2 KiB to 1 GiB on two H100s
	// (testdata/comm_2gpu_h100.csv, tools/multigpu/comm_bench.py). Small
	// collectives are bound by it: a 2 KiB one takes as long on the GPU.
	CollectiveIssue = 45.0e-6
	// FSDPUnitForward and FSDPUnitBackward are FSDP2's host time per
	// fully_shard module and pass beyond its kernels: the all-gather's
	// copy-in and copy-out, the unsharded parameters' set-up and
	// release, the streams' events; in backward also the reduce-scatter
	// and the gradients' copy-out. The medians over the two-GPU FSDP2
	// rows of testdata/multigpu_fam_x2.csv of the host time of the phase
	// less its kernels' (TestFSDPUnitHost).
	FSDPUnitForward  = 3.48e-3
	FSDPUnitBackward = 2.94e-3
	// ZeROTensorHost is ZeroRedundancyOptimizer's host time per parameter
	// tensor at its step: the broadcast of each updated tensor from its
	// owner (parameters_as_bucket_view off, PyTorch's default) and its
	// Python; the median over the ZeRO-1 rows of
	// testdata/multigpu_fam_x2.csv of the optimizer's host time less
	// AdamW's kernels', per tensor (TestZeROTensorHost).
	ZeROTensorHost = 90.4e-6
	// DTensorModuleForward and DTensorModuleBackward are torch's tensor
	// parallel (DTensor) host time per parallelised module and pass beyond
	// its kernels: sharding propagation and the redistribution of its
	// input or output; the medians over the tensor-parallel rows of
	// testdata/multigpu_fam_x2.csv (TestDTensorModuleHost).
	DTensorModuleForward  = 0.535e-3
	DTensorModuleBackward = 1.105e-3
	// CheckpointLayerHost is activation checkpointing's host time per
	// recomputed layer in backward beyond the recomputed kernels:
	// torch.utils.checkpoint's saved-tensor hooks and the recomputation's
	// Python forward (use_reentrant=False); the median over the
	// checkpointed rows of testdata/multigpu_fam_x2.csv
	// (TestCheckpointLayerHost).
	CheckpointLayerHost = 2.12e-3
)

// Causes of host time.
const (
	HostKernels     = "kernels"
	HostCollectives = "collectives"
	HostFSDP        = "fsdp_modules"
	HostZeRO        = "zero_broadcasts"
	HostDTensor     = "tensor_parallel"
	HostCheckpoint  = "checkpointing"
)

// host is the host's time per phase (forward, backward, optimizer), and
// by cause in each.
type host struct {
	phase [3]float64
	by    [3]map[string]float64
}

func (h host) total() float64 { return h.phase[0] + h.phase[1] + h.phase[2] }

// causes sums the causes over the phases.
func (h host) causes() map[string]float64 {
	out := map[string]float64{}
	for _, by := range h.by {
		for k, v := range by {
			out[k] += v
		}
	}
	return out
}

// host prices the host's side of the step from the kernels each phase
// launches and the distributed wrappers' work.
func (l layout) host(fwdK, bwdK, optK int) host {
	h := host{by: [3]map[string]float64{{}, {}, {}}}
	const fwd, bwd, opt = 0, 1, 2
	add := func(at int, cause string, t float64) {
		h.phase[at] += t
		if t > 0 {
			h.by[at][cause] += t
		}
	}
	k := func(n int) float64 { return float64(n) * TrainCPUPerKernel }
	add(fwd, HostKernels, k(fwdK))
	add(bwd, HostKernels, k(bwdK))
	add(opt, HostKernels, k(optK))
	L := float64(l.c.Layers)
	if l.r.Ckpt == FullCkpt {
		add(bwd, HostCheckpoint, L*CheckpointLayerHost)
	}
	if l.r.TP > 1 {
		// q, k, v, o, gate, up and down per layer, the embedding and the
		// LM head.
		mods := 7*L + 2
		add(fwd, HostDTensor, mods*DTensorModuleForward)
		add(bwd, HostDTensor, mods*DTensorModuleBackward)
	}
	if l.r.DP() <= 1 {
		return h
	}
	switch l.r.ZeRO {
	case 0, 1:
		// DDP all-reduces its buckets from backward's hooks.
		const bucket = 25 << 20
		add(bwd, HostCollectives, math.Ceil(l.gradsFull()/bucket)*CollectiveIssue)
		if l.r.ZeRO == 1 {
			add(opt, HostZeRO, float64(l.tensors())*ZeROTensorHost)
		}
	default:
		// fully_shard per decoder layer and the root.
		units := L + 1
		add(fwd, HostFSDP, units*FSDPUnitForward)
		add(bwd, HostFSDP, units*FSDPUnitBackward)
	}
	return h
}

// tensors counts the parameter tensors the optimizer steps: per layer two
// norms, the projections' weights and biases and the query and key norms;
// the embedding, the final norm and an untied LM head.
func (l layout) tensors() int64 {
	c := l.c
	if l.r.Method == LoRA {
		return 2 * c.Layers * int64(len(projections(c)))
	}
	per := int64(2 + 7)
	if c.FusedQKV {
		per -= 2
	}
	if c.FusedGateUp {
		per--
	}
	if c.QKVBias {
		per += 3
		if c.FusedQKV {
			per -= 2
		}
	}
	if c.OBias {
		per++
	}
	if c.MLPBias {
		per += 3
		if c.FusedGateUp {
			per--
		}
	}
	if c.QKNorm {
		per += 2
	}
	n := per*c.Layers + 2
	if !c.TiedEmbeddings {
		n++
	}
	return n
}
