"""Device memory that NCCL and the CUDA context take outside PyTorch's caching allocator, per rank.

torchrun --nproc_per_node N nccl_memory.py OUT.csv
Each rank reads cudaMemGetInfo (used = total - free) and torch's reserved bytes at each stage:
  context   after the CUDA context exists (a 1-element tensor)
  nccl      after init_process_group and a first all_reduce (the communicator and its buffers)
  ddp       after wrapping a 1-layer model in DDP (its buckets are PyTorch's, counted in reserved)
  collectives  after an all_gather_into_tensor and a reduce_scatter_tensor of 256 MiB (FSDP's pair)
outside = used - reserved: what the caching allocator does not see.
"""
import csv, os, sys

for k, v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[k] = v
import torch
import torch.distributed as dist

rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(rank)
rows = []


def mark(stage):
    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    used, res = total - free, torch.cuda.memory_reserved()
    rows.append(dict(gpu=torch.cuda.get_device_name(), rank=rank, stage=stage, total_bytes=total, used_bytes=used,
                     reserved_bytes=res, outside_bytes=used - res, nccl=".".join(map(str, torch.cuda.nccl.version()))))


x = torch.ones(1, device="cuda")
mark("context")
dist.init_process_group("nccl")
dist.all_reduce(x)
mark("nccl")
m = torch.nn.Linear(4096, 4096, device="cuda", dtype=torch.bfloat16)
ddp = torch.nn.parallel.DistributedDataParallel(m, device_ids=[rank])
ddp(torch.ones(8, 4096, device="cuda", dtype=torch.bfloat16)).sum().backward()
mark("ddp")
n, w = 128 << 20, dist.get_world_size()
a = torch.ones(n // w, device="cuda", dtype=torch.bfloat16)
b = torch.empty(n, device="cuda", dtype=torch.bfloat16)
dist.all_gather_into_tensor(b, a)
dist.reduce_scatter_tensor(a, b)
mark("collectives")
g = [None] * w
dist.all_gather_object(g, rows)
if dist.get_rank() == 0:
    with open(sys.argv[1], "w", newline="") as f:
        wr = csv.DictWriter(f, list(rows[0]))
        wr.writeheader()
        for rr in g:
            wr.writerows(rr)
    for r in (r for rr in g for r in rr):
        print(r["rank"], r["stage"], f"used {r['used_bytes'] / 2**30:.3f} GiB reserved {r['reserved_bytes'] / 2**30:.3f} outside {r['outside_bytes'] / 2**30:.3f}")
dist.destroy_process_group()
