"""Time NCCL collectives between the GPUs of one host, as data-parallel training issues them.

    torchrun --nproc_per_node N comm_bench.py OUT.csv

For all_reduce, all_gather_into_tensor, reduce_scatter_tensor and broadcast of bf16 messages from
2 KiB to 1 GiB (the size is the full tensor: what all_reduce and broadcast move, what all_gather
gathers into and reduce_scatter reduces from): gpu_us, the CUDA-event time per collective over a
back-to-back run, median of 5 runs; and host_us, the host's time to issue one collective
(perf_counter over the run's calls, no synchronisation inside), the floor a step of many small
collectives cannot go under. Rank 0 writes the CSV.
"""
import csv, os, statistics, sys, time

for k, v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[k] = v

import torch
import torch.distributed as dist


def main():
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    rows = []
    for op in ("all_reduce", "all_gather", "reduce_scatter", "broadcast"):
        for shift in range(11, 31, 1):
            nbytes = 1 << shift
            n = nbytes // 2
            full = torch.ones(n, dtype=torch.bfloat16, device="cuda")
            part = torch.ones(n // world, dtype=torch.bfloat16, device="cuda")
            call = {"all_reduce": lambda: dist.all_reduce(full),
                    "all_gather": lambda: dist.all_gather_into_tensor(full, part),
                    "reduce_scatter": lambda: dist.reduce_scatter_tensor(part, full),
                    "broadcast": lambda: dist.broadcast(full, 0)}[op]
            iters = 50 if nbytes <= 1 << 24 else 10
            for _ in range(3):
                call()
            torch.cuda.synchronize()
            gpu, host = [], []
            for _ in range(5):
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                dist.barrier()
                torch.cuda.synchronize()
                a.record()
                t = time.perf_counter()
                for _ in range(iters):
                    call()
                host.append((time.perf_counter() - t) / iters * 1e6)
                b.record()
                torch.cuda.synchronize()
                gpu.append(a.elapsed_time(b) / iters * 1e3)
            rows.append(dict(gpu=torch.cuda.get_device_name(), gpus=world, op=op, bytes=nbytes,
                             gpu_us=round(statistics.median(gpu), 3), host_us=round(statistics.median(host), 3),
                             torch=torch.__version__, nccl=".".join(map(str, torch.cuda.nccl.version()))))
            del full, part
    if rank == 0:
        with open(sys.argv[1], "w", newline="") as f:
            w = csv.DictWriter(f, list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        for r in rows:
            print(r["op"], r["bytes"], r["gpu_us"], r["host_us"], flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
