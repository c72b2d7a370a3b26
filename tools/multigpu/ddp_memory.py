"""Where a DDP run's second step holds more memory than its third, per phase and by allocation site.

torchrun --nproc_per_node 2 ddp_memory.py MODEL:MODE:BxS ...   (prints on rank 0)
For steps 1 to 3 of each configuration, from an empty allocator: memory_allocated before the forward,
after it, after backward and after the optimizer. For steps 2 and 3, with the allocator's history on,
the live blocks after the forward grouped by the innermost Python frames that allocated them, so the
two steps can be compared site by site.
"""
import collections, gc, os, sys

for k, v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[k] = v
import torch
import torch.distributed as dist
from transformers import AutoConfig, AutoModelForCausalLM

rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(rank)
dist.init_process_group("nccl")
G = 2**30


def sites():
    out = collections.Counter()
    for seg in torch.cuda.memory._snapshot()["segments"]:
        for b in seg["blocks"]:
            if b["state"] != "active_allocated":
                continue
            fr = [f for f in b.get("frames", []) if f["filename"].endswith(".py")][:3]
            key = " < ".join(f"{os.path.basename(f['filename'])}:{f['line']}:{f['name']}" for f in fr) or "(no python frame)"
            out[key] += b["size"]
    return out


for conf in sys.argv[1:]:
    name, mode, shape = conf.split(":")
    b, s = (int(x) for x in shape.split("x"))
    gc.collect()
    torch.cuda.empty_cache()
    cfg = AutoConfig.from_pretrained(os.path.join(os.environ["MODELS_DIR"], name))
    dt = torch.float32 if mode == "mixed" else torch.bfloat16
    with torch.device("cuda"):
        m = AutoModelForCausalLM.from_config(cfg, dtype=dt, attn_implementation="sdpa")
    m.config.use_cache = False
    m.train()
    ddp = torch.nn.parallel.DistributedDataParallel(m, device_ids=[rank])
    opt = torch.optim.AdamW(m.parameters(), lr=1e-5, fused=True)
    ids = torch.randint(0, cfg.vocab_size, (b, s), device="cuda")
    snaps = {}
    for step in (1, 2, 3):
        if step > 1:
            torch.cuda.memory._record_memory_history(max_entries=200000)
        torch.cuda.reset_peak_memory_stats()
        marks = [torch.cuda.memory_allocated()]
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=(mode == "mixed")):
            loss = ddp(input_ids=ids, labels=ids).loss
        torch.cuda.synchronize()
        marks.append(torch.cuda.memory_allocated())
        if step > 1:
            snaps[step] = sites()
        loss.backward()
        torch.cuda.synchronize()
        marks.append(torch.cuda.memory_allocated())
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        marks.append(torch.cuda.memory_allocated())
        if step > 1:
            torch.cuda.memory._record_memory_history(enabled=None)
        if rank == 0:
            print(conf, "step", step, "peak %.3f" % (torch.cuda.max_memory_allocated() / G),
                  "before/after fwd/after bwd/after opt", " ".join("%.3f" % (x / G) for x in marks), flush=True)
        loss = None
    if rank == 0:
        diff = {k: snaps[2][k] - snaps[3].get(k, 0) for k in snaps[2]}
        for k in snaps[3]:
            diff.setdefault(k, -snaps[3][k])
        print(conf, "live after forward, step 2 minus step 3, by site (GiB):")
        for k, v in sorted(diff.items(), key=lambda kv: -abs(kv[1]))[:8]:
            if abs(v) > 2**20:
                print("   %+.3f  %s" % (v / G, k))
    del m, ddp, opt, ids
dist.destroy_process_group()
