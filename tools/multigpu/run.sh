#!/bin/sh
# The measurements kept in testdata (see README.md): run on a host of 4 GPUs from the repository root.
# usage: tools/multigpu/run.sh OUT   (call 1: 2 ranks on GPUs 0-1 with single-GPU training steps of
#        other models on GPUs 2 and 3; call 2 with RANKS=4: 4 ranks; call 3 with
#        CONFIGS="llama-3.2-3b:zero3:bf16 ..." : those configurations on RANKS (2) ranks)
set -eu
out=$1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export MODELS_DIR=/tmp/models
tools/models/assemble.sh $MODELS_DIR
nvidia-smi --query-gpu=name,memory.total --format=csv > "$out/gpus.txt"
nvidia-smi topo -m > "$out/topo.txt" 2>&1 || true
if [ -n "${CONFIGS:-}" ]; then
	# The configurations the first 2-rank call did not reach (see README.md).
	BUDGET_S=${BUDGET_S:-400} timeout 540 torchrun --nproc_per_node "${RANKS:-2}" tools/multigpu/dist_bench.py \
		"$out/x${RANKS:-2}b" $CONFIGS > "$out/x${RANKS:-2}b.log" 2>&1 || true
	exit 0
fi
if [ "${RANKS:-2}" = 4 ]; then
	BUDGET_S=${BUDGET_S:-500} torchrun --nproc_per_node 4 tools/multigpu/dist_bench.py "$out/x4" \
		llama-3.1-8b:zero3:bf16 llama-3.1-8b:zero3:mixed llama-3.2-3b:zero3:bf16 llama-3.2-1b:ddp:bf16 \
		llama-3.2-1b:zero2:bf16 llama-3.2-1b:zero1:bf16 > "$out/x4.log" 2>&1
	exit 0
fi
CUDA_VISIBLE_DEVICES=2 BUDGET_S=420 python3 tools/train/train_bench.py "$out/train_gpu2.csv" \
	qwen2.5-1.5b llama-3.2-3b:bf16+lora > "$out/train_gpu2.log" 2>&1 &
CUDA_VISIBLE_DEVICES=3 BUDGET_S=420 python3 tools/train/train_bench.py "$out/train_gpu3.csv" \
	qwen3-8b:bf16+lora mistral-7b-v0.1:lora qwen3-1.7b:mixed > "$out/train_gpu3.log" 2>&1 &
CUDA_VISIBLE_DEVICES=0,1 BUDGET_S=450 torchrun --nproc_per_node 2 tools/multigpu/dist_bench.py "$out/x2" \
	llama-3.2-1b:ddp:bf16 llama-3.2-1b:zero3:bf16 llama-3.2-1b:zero3:mixed llama-3.2-1b:ddp:mixed \
	llama-3.2-1b:zero2:bf16 llama-3.2-1b:zero1:bf16 llama-3.1-8b:zero3:bf16 llama-3.1-8b:ddp:bf16 \
	llama-3.1-8b:zero3:mixed llama-3.2-3b:zero3:bf16 llama-3.2-3b:ddp:mixed > "$out/x2.log" 2>&1 || true
wait
