"""Where and why a DDP run runs out of memory: step, phase, allocated and reserved bytes, per rank.

torchrun --nproc_per_node N ddp_oom.py OUT MODEL:MODE:BxS[:ckpt] ...   (rows appended to OUT.rankR.csv)
Each configuration starts a fresh model (as a user's run does) and runs STEPS (4) steps as dist_bench.py does:
forward with labels (bf16 autocast in mixed), backward, fused AdamW, zero_grad(set_to_none=True), with
no synchronisation between phases. After each phase the host-side memory_allocated and
memory_reserved are recorded (reading them does not synchronise), and each step's
max_memory_allocated. An out-of-memory error records where it struck and the allocator's state then.
PAUSE_S=T: after step 1, synchronise and sleep T seconds (NCCL's watchdog thread has then released its
references to step 1's collectives before DDP rebuilds its buckets at step 2's forward).
Run with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to see whether fragmentation decides it.
BUCKET_VIEW=1: DDP(gradient_as_bucket_view=True), the gradients being views of the buckets.
"""
import csv, datetime, gc, os, sys, time

for k, v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[k] = v
import torch
import torch.distributed as dist
from transformers import AutoConfig, AutoModelForCausalLM

rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(rank)
# A rank that runs out of memory inside backward leaves DDP's all-reduces unmatched: the watchdog then
# ends the job after 60 s instead of NCCL's default 10 minutes. Rows are written as they are taken.
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=60))
COLS = ["gpu", "gpus", "rank", "model", "mode", "ckpt", "batch", "seq", "pause_s", "alloc_conf", "bucket_view", "step",
        "status", "phase", "fwd_alloc", "fwd_reserved", "bwd_alloc", "bwd_reserved", "opt_alloc", "opt_reserved",
        "peak_alloc", "peak_reserved", "oom_alloc", "oom_reserved", "message"]
OUT = f"{sys.argv[1]}.rank{rank}.csv"


def write(row):
    new = not os.path.exists(OUT)
    with open(OUT, "a", newline="") as f:
        w = csv.DictWriter(f, COLS)
        if new:
            w.writeheader()
        w.writerow(row)


PAUSE = float(os.environ.get("PAUSE_S", "0"))
VIEW = os.environ.get("BUCKET_VIEW", "0") == "1"
ALLOC = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
for conf in sys.argv[2:]:
    parts = conf.split(":")
    name, mode, shape = parts[:3]
    ckpt = len(parts) > 3 and parts[3] == "ckpt"
    b, s = (int(x) for x in shape.split("x"))
    gc.collect()
    torch.cuda.empty_cache()
    cfg = AutoConfig.from_pretrained(os.path.join(os.environ["MODELS_DIR"], name))
    dt = torch.float32 if mode == "mixed" else torch.bfloat16
    torch.manual_seed(0)
    with torch.device("cuda"):
        m = AutoModelForCausalLM.from_config(cfg, dtype=dt, attn_implementation="sdpa")
    m.config.use_cache = False
    if ckpt:
        m.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    m.train()
    ddp = torch.nn.parallel.DistributedDataParallel(m, device_ids=[rank], gradient_as_bucket_view=VIEW)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-5, fused=True)
    ids = torch.randint(0, cfg.vocab_size, (b, s), device="cuda")
    base = dict(gpu=torch.cuda.get_device_name(), gpus=dist.get_world_size(), rank=rank, model=name, mode=mode,
                ckpt=int(ckpt), batch=b, seq=s, pause_s=PAUSE, alloc_conf=ALLOC, bucket_view=int(VIEW))
    failed = torch.zeros(1, device="cuda")
    for step in range(1, int(os.environ.get("STEPS", "4")) + 1):
        torch.cuda.reset_peak_memory_stats()
        row = dict(base, step=step)
        phase = "forward"
        try:
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=(mode == "mixed")):
                loss = ddp(input_ids=ids, labels=ids).loss
            row.update(fwd_alloc=torch.cuda.memory_allocated(), fwd_reserved=torch.cuda.memory_reserved())
            phase = "backward"
            loss.backward()
            row.update(bwd_alloc=torch.cuda.memory_allocated(), bwd_reserved=torch.cuda.memory_reserved())
            phase = "optimizer"
            opt.step()
            opt.zero_grad(set_to_none=True)
            row.update(status="ok", opt_alloc=torch.cuda.memory_allocated(), opt_reserved=torch.cuda.memory_reserved(),
                       peak_alloc=torch.cuda.max_memory_allocated(), peak_reserved=torch.cuda.max_memory_reserved())
        except torch.cuda.OutOfMemoryError as e:
            failed += 1
            row.update(status="oom", phase=phase, oom_alloc=torch.cuda.memory_allocated(),
                       oom_reserved=torch.cuda.memory_reserved(), peak_alloc=torch.cuda.max_memory_allocated(),
                       message=str(e).split("\n")[0][:300])
        loss = None
        if step == 1 and PAUSE > 0 and not failed.item():
            torch.cuda.synchronize()
            time.sleep(PAUSE)
        write(row)
        if rank == 0:
            print(conf, f"pause={PAUSE} alloc={ALLOC or 'default'} view={int(VIEW)}", {k: (round(v / 2**30, 3) if isinstance(v, int) and v > 2**20 else v)
                  for k, v in row.items() if k not in base}, flush=True)
        # Every rank learns whether any rank ran out, so the collectives stay matched.
        dist.all_reduce(failed)
        if failed.item():
            break
    opt.zero_grad(set_to_none=True)
    del m, ddp, opt, ids
    gc.collect()
    torch.cuda.empty_cache()
dist.destroy_process_group()
