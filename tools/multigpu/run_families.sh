#!/bin/sh
# Issue #36's measurements: model families other than Llama under DDP, ZeroRedundancyOptimizer, FSDP2
# and tensor parallelism (README.md). Run from the repository root on a host of 2 or 4 GPUs:
#     tools/multigpu/run_families.sh OUT
# Four GPUs run two 2-rank lanes side by side (GPUs 0-1 and 2-3: NVLink between every pair, so the
# lanes share no link); two GPUs run lane A only. A_CONFIGS and B_CONFIGS replace the lanes' configurations. RANKS=4 runs CONFIGS4 on 4 ranks instead.
# Everything comes back as OUT/results.tar.gz (CSVs, logs) and OUT/traces_LANE.tar.gz (rank 0's traces).
set -u
out=$1
here=$(cd "$(dirname "$0")" && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export BUDGET_S=${BUDGET_S:-340} MODELS_DIR=/tmp/models SHAPES=${SHAPES:-1x1024,2x2048,2x4096,4x4096} TRACE_MIN_TOKENS=4096
"$here/../models/assemble.sh" $MODELS_DIR
work=/tmp/fam
mkdir -p $work
nvidia-smi --query-gpu=name,memory.total --format=csv > $work/gpus.txt
nvidia-smi topo -m > $work/topo.txt 2>&1
python3 -c 'import torch, transformers; print(torch.__version__, transformers.__version__, torch.cuda.nccl.version())' > $work/versions.txt 2>&1
n=$(nvidia-smi -L | wc -l)
A=${A_CONFIGS:-"qwen2.5-0.5b:ddp:bf16 qwen2.5-0.5b:zero1:bf16 qwen2.5-0.5b:zero3:bf16 llama-3.1-8b:tp:bf16:0 qwen2.5-1.5b:ddp:mixed
 qwen2.5-1.5b:zero3:bf16 qwen2.5-1.5b:zero1:mixed qwen2.5-0.5b:zero2:mixed mistral-7b-v0.1:zero3:bf16 qwen2.5-1.5b:zero2:bf16"}
B=${B_CONFIGS:-"qwen3-1.7b:ddp:bf16 qwen3-1.7b:zero1:bf16 qwen3-1.7b:zero2:bf16 qwen3-8b:tp:bf16:0 qwen3-1.7b:zero3:mixed
 qwen3-8b:zero3:bf16 qwen3-1.7b:ddp:mixed mistral-7b-v0.1:zero1:bf16 qwen2.5-0.5b:ddp:mixed qwen3-1.7b:zero2:mixed"}
lane() { # NAME GPUS PORT CONFIGS...
	name=$1 gpus=$2 port=$3
	shift 3
	k=$(echo "$gpus" | tr , '\n' | wc -l)
	[ "${COMM:-1}" = 0 ] || CUDA_VISIBLE_DEVICES=$gpus timeout 60 torchrun --master_port $((port + 1)) --nproc_per_node $k \
		"$here/comm_bench.py" $work/comm_$name.csv > $work/comm_$name.log 2>&1
	CUDA_VISIBLE_DEVICES=$gpus timeout ${LANE_S:-400} torchrun --master_port $port --nproc_per_node $k \
		"$here/dist_bench.py" $work/$name "$@" > $work/$name.log 2>&1
}
if [ "${RANKS:-2}" = 4 ]; then
	lane x4 0,1,2,3 29600 $CONFIGS4
elif [ "$n" -ge 4 ]; then
	lane A 0,1 29500 $A &
	lane B 2,3 29510 $B &
	wait
else
	lane A 0,1 29500 $A $B
fi
for d in $work/*/; do
	l=$(basename $d)
	mv $d/traces $work/traces_$l 2>/dev/null
	(cd $work && tar czf $out/traces_$l.tar.gz traces_$l/*rank0.json.gz 2>/dev/null)
done
cd $work && tar czf $out/results.tar.gz --exclude='traces_*' . && ls -la $out
