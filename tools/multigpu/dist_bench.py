"""Measure data-parallel training steps of Hugging Face causal LMs on several GPUs of one host.

Run one process per GPU:
    NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \
    MODELS_DIR=DIR torchrun --nproc_per_node N dist_bench.py OUT_DIR CONFIG ...

CONFIG is MODEL:STRATEGY:MODE, STRATEGY one of
    ddp    DistributedDataParallel (ZeRO-0): every rank holds weights, gradients and optimizer states;
           gradients all-reduced in DDP's buckets (25 MiB, gradient_as_bucket_view off: PyTorch's default)
    zero1  DDP with torch.distributed.optim.ZeroRedundancyOptimizer (optimizer states sharded)
    zero2  FSDP2 fully_shard per decoder layer and the root, reshard_after_forward=False
           (parameters stay gathered between forward and backward; gradients and states sharded)
    zero3  FSDP2 fully_shard per decoder layer and the root, reshard_after_forward=True
    tp     tensor parallel over all ranks (torch.distributed.tensor.parallel): q/k/v/gate/up column-wise,
           o/down row-wise, the embedding row-wise (vocabulary split), the LM head column-wise with its
           logits left split over the vocabulary and the loss under loss_parallel (Megatron's layout;
           untied embeddings only)
and MODE one of
    bf16   weights, gradients and AdamW states in bf16
    mixed  fp32 master weights; DDP runs the forward under bf16 autocast, FSDP gathers bf16 parameters
           (MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32)); AdamW in fp32
An optional fourth field picks checkpointing: 0 (off), 1 (on) or 01 (both, the default).
For each config, activation checkpointing off then on (HF gradient_checkpointing, use_reentrant=False)
over SHAPES (micro-batch per GPU, sequence) in rising token order; after the first out-of-memory
shape the larger ones are 'skipped'. A step: forward with labels, backward, AdamW(fused) step,
zero_grad(set_to_none=True). cpu_fwd_ms, cpu_bwd_ms, cpu_opt_ms: the host's time to issue each
phase (perf_counter, no synchronisation inside; median), against the CUDA-event times: a phase whose
host time reaches its GPU time is launch-bound. pre_opt_bytes and opt_peak_bytes: memory_allocated
before opt.step and the peak inside it, from one more step. Memory: max_memory_allocated/reserved over 3 timed steps after a warm-up
step; persistent = memory_allocated between steps. Time: CUDA events per phase on every rank, median.

For the first shape that fits with checkpointing off (of at least TRACE_MIN_TOKENS tokens), one more step runs under torch.profiler
(record_shapes, so c10d's record_param_comms carries message sizes), written per rank to
OUT_DIR/traces/MODEL_STRATEGY_MODE_bB_sS_rankR.json.gz. From that trace the script sums, per rank,
the union of compute kernels, of NCCL kernels, their overlap, and the communication not hidden
under compute (exposed); per collective (ar all-reduce, ag all-gather, rs reduce-scatter, bc broadcast)
the kernels' count, summed duration and exposed time; gpu_idle_ms, the step's span with no kernel
running (the profiler slows the host's launches, so read it with cpu_*_ms); kernels, all of them.

Writes OUT_DIR/steps.csv (one row per rank and shape) and each rank's OUT_DIR/steps_rankR.csv, rewritten
after every config.
"""
import csv, gzip, json, os, statistics, sys, time, traceback

for k, v in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[k] = v

import torch
import torch.distributed as dist
from transformers import AutoConfig, AutoModelForCausalLM

T0 = time.time()
BUDGET = float(os.environ.get("BUDGET_S", "480"))
HERE = os.path.dirname(os.path.abspath(__file__))
SHAPES = [tuple(int(x) for x in sh.split("x")) for sh in os.environ.get("SHAPES", "2x2048,4x4096,8x4096").split(",")]
# The profiled step: the first shape of at least TRACE_MIN_TOKENS tokens per rank that fits, checkpointing off.
TRACE_MIN = int(os.environ.get("TRACE_MIN_TOKENS", "0"))
COLS = ["gpu", "gpus", "rank", "model", "params", "strategy", "mode", "ckpt", "batch", "seq", "status",
        "step_ms", "fwd_ms", "bwd_ms", "opt_ms", "tokens_per_s", "peak_alloc_bytes", "peak_reserved_bytes",
        "persistent_bytes", "trace", "trace_step_ms", "compute_ms", "comm_ms", "overlap_ms", "exposed_comm_ms",
        "nccl_kernels", "torch", "transformers", "optimizer",
        "cpu_fwd_ms", "cpu_bwd_ms", "cpu_opt_ms", "pre_opt_bytes", "opt_peak_bytes", "kernels", "gpu_idle_ms",
        "ar_n", "ar_ms", "ar_exposed_ms", "ag_n", "ag_ms", "ag_exposed_ms", "rs_n", "rs_ms", "rs_exposed_ms",
        "bc_n", "bc_ms", "bc_exposed_ms"]
KINDS = (("ar", "allreduce"), ("ag", "allgather"), ("rs", "reducescatter"), ("bc", "broadcast"))


def log(*a):
    if dist.get_rank() == 0:
        print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


class Both:
    """Steps several optimizers as one."""

    def __init__(self, opts):
        self.opts = opts

    def step(self):
        for o in self.opts:
            o.step()

    def zero_grad(self, set_to_none=True):
        for o in self.opts:
            o.zero_grad(set_to_none=set_to_none)


def build(name, strategy, mode):
    cfg = AutoConfig.from_pretrained(os.path.join(os.environ.get("MODELS_DIR", os.path.join(HERE, "models")), name))
    fp32 = mode == "mixed"
    dt = torch.float32 if fp32 else torch.bfloat16
    torch.manual_seed(0)
    with torch.device("cuda"):
        m = AutoModelForCausalLM.from_config(cfg, dtype=dt, attn_implementation="sdpa")
    m = m.to(dt)
    m.config.use_cache = False
    params = sum(p.numel() for p in m.parameters())
    autocast = False
    if strategy == "tp":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor import Replicate, Shard
        from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
        if cfg.tie_word_embeddings:
            raise ValueError(f"{name}: tp needs untied embeddings")
        mesh = init_device_mesh("cuda", (dist.get_world_size(),))
        plan = {f"self_attn.{p}": ColwiseParallel() for p in ("q_proj", "k_proj", "v_proj")}
        plan.update({f"mlp.{p}": ColwiseParallel() for p in ("gate_proj", "up_proj")})
        plan.update({"self_attn.o_proj": RowwiseParallel(), "mlp.down_proj": RowwiseParallel()})
        for layer in m.model.layers:
            parallelize_module(layer, mesh, plan)
        parallelize_module(m, mesh, {"model.embed_tokens": RowwiseParallel(input_layouts=Replicate()),
                                     "lm_head": ColwiseParallel(output_layouts=Shard(-1), use_local_output=False)})
        wrapped = m
        autocast = fp32
    elif strategy in ("zero2", "zero3"):
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        kw = dict(reshard_after_forward=(strategy == "zero3"))
        if fp32:
            kw["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for layer in m.model.layers:
            fully_shard(layer, **kw)
        fully_shard(m, **kw)
        wrapped = m
    else:
        from torch.nn.parallel import DistributedDataParallel as DDP
        wrapped = DDP(m, device_ids=[torch.cuda.current_device()])
        autocast = fp32
    if strategy == "zero1":
        from torch.distributed.optim import ZeroRedundancyOptimizer
        opt = ZeroRedundancyOptimizer(m.parameters(), optimizer_class=torch.optim.AdamW, lr=1e-5, fused=True)
        optname = "ZeroRedundancyOptimizer(AdamW fused)"
    elif strategy == "tp":
        # Fused AdamW takes DTensors or tensors, not both in one call: the split weights and the
        # replicated norms step apart, each in one fused launch per group.
        from torch.distributed.tensor import DTensor
        split = [p for p in m.parameters() if isinstance(p, DTensor)]
        whole = [p for p in m.parameters() if not isinstance(p, DTensor)]
        opt = Both([torch.optim.AdamW(ps, lr=1e-5, fused=True) for ps in (split, whole) if ps])
        optname = "AdamW fused (DTensor and tensor parameters apart)"
    else:
        try:
            opt = torch.optim.AdamW(m.parameters(), lr=1e-5, fused=True)
            optname = "AdamW fused"
        except (RuntimeError, TypeError):
            opt = torch.optim.AdamW(m.parameters(), lr=1e-5, foreach=True)
            optname = "AdamW foreach"
    return cfg, m, wrapped, opt, params, autocast, optname


def union(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(iv):
    return sum(e - s for s, e in iv)


def intersect(a, b):
    i = j = 0
    tot = 0.0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if e > s:
            tot += e - s
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tot


def trace_split(path):
    """Compute, communication, overlap and exposed communication (ms) of the kernels in a trace."""
    with gzip.open(path, "rt") as f:
        ev = json.load(f)["traceEvents"]
    comp, comm = [], []
    kind = {k: [] for k, _ in KINDS}
    n = 0
    for e in ev:
        if e.get("cat") != "kernel" or e.get("ph") != "X":
            continue
        iv = (float(e["ts"]), float(e["ts"]) + float(e["dur"]))
        nm = e.get("name", "").lower()
        if "nccl" in nm:
            comm.append(iv)
            n += 1
            flat = nm.replace("_", "")
            for k, key in KINDS:
                if key in flat:
                    kind[k].append(iv)
                    break
        else:
            comp.append(iv)
    cu, mu = union(comp), union(comm)
    allk = union(comp + comm)
    span = (allk[-1][1] - allk[0][0]) if allk else 0.0
    ov = intersect(cu, mu)
    per = {}
    for k, _ in KINDS:
        ku = union(kind[k])
        per.update({k + "_n": len(kind[k]), k + "_ms": round(sum(e - s for s, e in kind[k]) / 1e3, 4),
                    k + "_exposed_ms": round((length(ku) - intersect(cu, ku)) / 1e3, 4)})
    return dict(kernels=len(comp) + n, gpu_idle_ms=round((span - length(allk)) / 1e3, 4), **per,
                trace_step_ms=round(span / 1e3, 4), compute_ms=round(length(cu) / 1e3, 4),
                comm_ms=round(length(mu) / 1e3, 4), overlap_ms=round(ov / 1e3, 4),
                exposed_comm_ms=round((length(mu) - ov) / 1e3, 4), nccl_kernels=n)


def add(rows, row, out_dir):
    """Keeps a row and rewrites this rank's own file: a rank stuck in a collective keeps what it measured."""
    rows.append(row)
    with open(os.path.join(out_dir, f"steps_rank{row['rank']}.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, COLS)
        w.writeheader()
        w.writerows(rows)


def run(conf, out_dir, rows, gpu, versions):
    name, strategy, mode, *rest = conf.split(":")
    ckpts = [c == "1" for c in (rest[0] if rest else "01")]
    rank, world = dist.get_rank(), dist.get_world_size()
    cfg, m, wrapped, opt, params, autocast, optname = build(name, strategy, mode)
    m.train()
    traced = False
    tp = strategy == "tp"
    if tp:
        from torch.distributed.tensor.parallel import loss_parallel
    from contextlib import nullcontext
    lp = loss_parallel if tp else nullcontext

    def forward(ids):
        if not tp:
            return wrapped(input_ids=ids, labels=ids).loss
        # The logits stay split over the vocabulary; the loss (fp32, as transformers' is) reduces across
        # ranks. Labels: the next token (the last position's is the first: timing, not learning).
        h = m.model(input_ids=ids).last_hidden_state
        logits = m.lm_head(h).float()
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), torch.roll(ids, -1, 1).flatten())

    for ckpt in ckpts:
        if ckpt:
            m.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        else:
            m.gradient_checkpointing_disable()
        oom = False
        for b, s in SHAPES:
            row = dict(gpu=gpu, gpus=world, rank=rank, model=name, params=params, strategy=strategy, mode=mode,
                       ckpt=int(ckpt), batch=b, seq=s, optimizer=optname, **versions)
            if oom:
                add(rows, dict(row, status="skipped"), out_dir)
                continue
            over = torch.tensor([float(time.time() - T0 > BUDGET)], device="cuda")
            dist.all_reduce(over, op=dist.ReduceOp.MAX)
            if over.item():
                add(rows, dict(row, status="budget"), out_dir)
                continue
            g = torch.Generator(device="cuda").manual_seed(0 if tp else rank)
            ids = torch.randint(0, cfg.vocab_size, (b, s), device="cuda", generator=g)
            ev = lambda: torch.cuda.Event(enable_timing=True)

            def step(times=None, host=None, mem=None):
                e = [ev() for _ in range(4)]
                c = [time.perf_counter()]
                e[0].record()
                with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast), lp():
                    loss = forward(ids)
                e[1].record()
                c.append(time.perf_counter())
                with lp():
                    loss.backward()
                e[2].record()
                c.append(time.perf_counter())
                if mem is not None:
                    torch.cuda.synchronize()
                    mem.append(torch.cuda.memory_allocated())
                    torch.cuda.reset_peak_memory_stats()
                opt.step()
                opt.zero_grad(set_to_none=True)
                e[3].record()
                c.append(time.perf_counter())
                if mem is not None:
                    torch.cuda.synchronize()
                    mem.append(torch.cuda.max_memory_allocated())
                if times is not None:
                    torch.cuda.synchronize()
                    times.append([e[i].elapsed_time(e[i + 1]) for i in range(3)])
                    host.append([1e3 * (c[i + 1] - c[i]) for i in range(3)])
            failed = torch.zeros(1, device="cuda")
            try:
                step()
                torch.cuda.synchronize()
                persistent = torch.cuda.memory_allocated()
                torch.cuda.reset_peak_memory_stats()
                times, host = [], []
                for _ in range(3):
                    step(times, host)
                peak, reserved = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
                mem = []
                step(mem=mem)
            except torch.cuda.OutOfMemoryError:
                failed += 1
            # Every rank learns whether any rank ran out, so the collectives stay matched.
            dist.all_reduce(failed)
            if failed.item():
                oom = True
                add(rows, dict(row, status="oom"), out_dir)
                log(name, strategy, mode, "ckpt" if ckpt else "", b, s, "oom")
                opt.zero_grad(set_to_none=True)
                del ids
                torch.cuda.empty_cache()
                continue
            f, bw, o = (statistics.median(t[i] for t in times) for i in range(3))
            hf, hb, ho = (statistics.median(t[i] for t in host) for i in range(3))
            tot = statistics.median(sum(t) for t in times)
            dp = 1 if tp else world
            r = dict(row, status="ok", step_ms=round(tot, 4), fwd_ms=round(f, 4), bwd_ms=round(bw, 4),
                     opt_ms=round(o, 4), tokens_per_s=round(dp * b * s / tot * 1e3, 1), peak_alloc_bytes=peak,
                     peak_reserved_bytes=reserved, persistent_bytes=persistent, cpu_fwd_ms=round(hf, 4),
                     cpu_bwd_ms=round(hb, 4), cpu_opt_ms=round(ho, 4), pre_opt_bytes=mem[0], opt_peak_bytes=mem[1])
            if not ckpt and not traced and b * s >= TRACE_MIN:
                traced = True
                from torch.profiler import ProfilerActivity, profile
                with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
                    step()
                    torch.cuda.synchronize()
                tdir = os.path.join(out_dir, "traces")
                os.makedirs(tdir, exist_ok=True)
                base = os.path.join(tdir, f"{name}_{strategy}_{mode}_b{b}_s{s}_rank{rank}.json")
                prof.export_chrome_trace(base)
                with open(base, "rb") as src, gzip.open(base + ".gz", "wb") as dst:
                    dst.write(src.read())
                os.remove(base)
                r.update(trace=os.path.basename(base) + ".gz", **trace_split(base + ".gz"))
            add(rows, r, out_dir)
            log(name, strategy, mode, "ckpt" if ckpt else "", b, s, f"{tot:.1f} ms (host {hf + hb + ho:.1f})",
                f"peak {peak / 2**30:.2f} GiB", r.get("exposed_comm_ms", ""))
            del ids
            torch.cuda.empty_cache()
    del m, wrapped, opt
    torch.cuda.empty_cache()


def main():
    out_dir = sys.argv[1]
    import datetime
    # A rank that fails alone leaves the others in a collective: give up after 2 minutes, not 10.
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=120))
    rank = dist.get_rank()
    import transformers
    versions = {"torch": torch.__version__, "transformers": transformers.__version__}
    gpu = torch.cuda.get_device_name()
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    for conf in sys.argv[2:]:
        try:
            run(conf, out_dir, rows, gpu, versions)
        except Exception:
            traceback.print_exc()
        torch.cuda.empty_cache()
        gathered = [None] * dist.get_world_size()
        dist.all_gather_object(gathered, rows)
        if rank == 0:
            with open(os.path.join(out_dir, "steps.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, COLS)
                w.writeheader()
                for i in range(len(rows)):
                    for g in gathered:
                        w.writerow(g[i])
    log("done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
