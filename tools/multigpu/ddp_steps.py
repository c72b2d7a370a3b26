"""Peak memory of each of a DDP run's first steps, from a fresh start, per rank.

torchrun --nproc_per_node N ddp_steps.py OUT.csv MODEL:MODE:BATCHxSEQ[:ckpt] ...
Each configuration starts from an empty allocator (gc.collect, empty_cache; memory_allocated is
recorded at the start) and runs 4 steps of forward with labels, backward, fused AdamW and
zero_grad(set_to_none=True), as dist_bench.py does, recording max_memory_allocated per step
(peaks reset before each) and memory_allocated after it. DDP rebuilds its buckets after the first
backward; this shows at which step, and by how much, the run's peak differs from the steady one.
"""
import csv, gc, os, sys

for k, v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[k] = v
import torch
import torch.distributed as dist
from transformers import AutoConfig, AutoModelForCausalLM

rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(rank)
dist.init_process_group("nccl")
rows = []
for conf in sys.argv[2:]:
    parts = conf.split(":")
    name, mode, shape = parts[:3]
    ckpt = len(parts) > 3 and parts[3] == "ckpt"
    b, s = (int(x) for x in shape.split("x"))
    gc.collect()
    torch.cuda.empty_cache()
    start = torch.cuda.memory_allocated()
    cfg = AutoConfig.from_pretrained(os.path.join(os.environ["MODELS_DIR"], name))
    dt = torch.float32 if mode == "mixed" else torch.bfloat16
    torch.manual_seed(0)
    with torch.device("cuda"):
        m = AutoModelForCausalLM.from_config(cfg, dtype=dt, attn_implementation="sdpa")
    m.config.use_cache = False
    if ckpt:
        m.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    m.train()
    ddp = torch.nn.parallel.DistributedDataParallel(m, device_ids=[rank])
    opt = torch.optim.AdamW(m.parameters(), lr=1e-5, fused=True)
    ids = torch.randint(0, cfg.vocab_size, (b, s), device="cuda")
    for step in range(1, 5):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        row = dict(gpu=torch.cuda.get_device_name(), gpus=dist.get_world_size(), rank=rank, model=name, mode=mode,
                   ckpt=int(ckpt), batch=b, seq=s, step=step, start_bytes=start)
        try:
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=(mode == "mixed")):
                loss = ddp(input_ids=ids, labels=ids).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            row.update(status="ok", peak_alloc_bytes=torch.cuda.max_memory_allocated(),
                       peak_reserved_bytes=torch.cuda.max_memory_reserved(), after_bytes=torch.cuda.memory_allocated())
        except torch.cuda.OutOfMemoryError:
            row.update(status="oom")
            rows.append(row)
            break
        rows.append(row)
        if rank == 0:
            print(conf, step, f"peak {row['peak_alloc_bytes'] / 2**30:.3f} GiB after {row['after_bytes'] / 2**30:.3f} GiB", flush=True)
    del m, ddp, opt, ids
    loss = None
g = [None] * dist.get_world_size()
dist.all_gather_object(g, rows)
if dist.get_rank() == 0:
    with open(sys.argv[1], "w", newline="") as f:
        w = csv.DictWriter(f, ["gpu", "gpus", "rank", "model", "mode", "ckpt", "batch", "seq", "step", "status",
                               "start_bytes", "peak_alloc_bytes", "peak_reserved_bytes", "after_bytes"])
        w.writeheader()
        for rr in g:
            w.writerows(rr)
dist.destroy_process_group()
