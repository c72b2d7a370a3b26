"""Tensor-parallel timing of the reference decoder, and NCCL all-reduce latency eager and inside a
CUDA graph, on the GPUs of one host (one process per GPU, torchrun).

The decoder is ref_decode.Ref with tp ranks (Megatron sharding: heads, KV heads, MLP columns and
LM-head rows split, two all-reduces per layer). Decode steps are captured with their all-reduces in
one CUDA graph and replayed, as ref_decode.py does for one GPU; prefill runs eagerly.

usage: torchrun --nproc_per_node=N tp_bench.py OUTDIR CONFIG.json [CONFIG.json ...]
writes OUTDIR/ref_tp{N}_{gpu}.csv (ref_decode.py's columns plus tp) and OUTDIR/allreduce_{N}gpu.csv
"""
import csv, json, os, statistics, sys, time, traceback

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ref_decode import Ref, events_ms  # noqa: E402

PREFILL = [(1, 2048), (4, 2048), (1, 8192)]
DECODE = [(1, 512), (1, 4096), (8, 4096), (32, 512), (64, 4096)]
T0 = time.time()
BUDGET = float(os.environ.get("BUDGET_S", "360"))


def log(*a):
    if dist.get_rank() == 0:
        print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


def graph_of(fn):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g


def allreduce_rows(world):
    """Per-call all-reduce time for bf16 messages of 1 KiB to 256 MiB: one call timed alone
    (as the shared NCCL measurement does), 20 calls back to back eagerly, and 20 calls replayed
    from one CUDA graph."""
    rows = []
    for p in range(10, 29, 2):
        n = (1 << p) // 2
        x = torch.ones(n, dtype=torch.bfloat16, device="cuda")
        one = events_ms(lambda: dist.all_reduce(x), 5, 20)
        k = 20
        eager = events_ms(lambda: [dist.all_reduce(x) for _ in range(k)], 2, 10) / k
        g = graph_of(lambda: [dist.all_reduce(x) for _ in range(k)])
        graph = events_ms(g.replay, 2, 10) / k
        del g
        rows.append(dict(world=world, bytes=n * 2, single_us=one * 1e3, eager_us=eager * 1e3, graph_us=graph * 1e3))
        log(rows[-1])
    return rows


def bench(path, rows, gpu, world):
    c = json.load(open(path))
    name = os.path.basename(path).removesuffix(".json")
    torch.manual_seed(dist.get_rank())
    m = Ref(c, tp=world)
    base = dict(gpu=gpu, model=name, impl="ref", tp=world)
    log(name, "tp", world)
    with torch.inference_mode():
        for b, s in PREFILL:
            if time.time() - T0 > BUDGET:
                return
            r = dict(base, phase="prefill", batch=b, seq=s, ctx=0)
            try:
                ids = torch.randint(0, m.V, (b, s), device="cuda")
                torch.cuda.reset_peak_memory_stats()
                r["gpu_ms"] = events_ms(lambda: m.forward(ids), 2, 5)
                r["peak_bytes"] = torch.cuda.max_memory_allocated()
                r["status"] = "ok"
            except torch.OutOfMemoryError:
                r["status"] = "oom"
            torch.cuda.empty_cache()
            log(r); rows.append(r)
        for b, ctx in DECODE:
            if time.time() - T0 > BUDGET:
                return
            r = dict(base, phase="decode", batch=b, seq=1, ctx=ctx)
            attend = min(ctx + 1, m.window) if m.window else ctx + 1
            cache = g = None
            try:
                torch.cuda.reset_peak_memory_stats()
                cache = [(torch.zeros(b, m.KV, ctx + 1, m.hd, device="cuda", dtype=torch.bfloat16),
                          torch.zeros(b, m.KV, ctx + 1, m.hd, device="cuda", dtype=torch.bfloat16)) for _ in range(m.L)]
                ids = torch.randint(0, m.V, (b, 1), device="cuda")
                g = graph_of(lambda: m.forward(ids, cache, ctx, attend))
                r["gpu_ms"] = events_ms(g.replay, 3, 20)
                r["eager_ms"] = events_ms(lambda: m.forward(ids, cache, ctx, attend), 2, 5)
                r["peak_bytes"] = torch.cuda.max_memory_allocated()
                r["cache_bytes"] = sum(k.numel() * 2 * 2 for k, _ in cache)
                r["status"] = "ok"
            except torch.OutOfMemoryError:
                r["status"] = "oom"
            except Exception as e:
                r["status"] = "error: " + repr(e)[:150]
                traceback.print_exc()
            del g, cache
            torch.cuda.empty_cache()
            log(r); rows.append(r)


def main():
    out, paths = sys.argv[1], sys.argv[2:]
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(rank)
    gpu = torch.cuda.get_device_name(0)
    tag = "h200" if "H200" in gpu else "h100" if "H100" in gpu else "gpu"
    ar = allreduce_rows(world)
    rows = []
    for p in paths:
        try:
            bench(p, rows, gpu, world)
        except Exception:
            traceback.print_exc()
        if rank == 0:
            keys = ["gpu", "model", "impl", "tp", "phase", "batch", "seq", "ctx", "status", "gpu_ms", "eager_ms", "peak_bytes", "cache_bytes"]
            with open(os.path.join(out, f"ref_tp{world}_{tag}.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
                w.writeheader(); w.writerows(rows)
    if rank == 0:
        with open(os.path.join(out, f"allreduce_{world}gpu.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(ar[0]))
            w.writeheader(); w.writerows(ar)
        print(gpu, "NCCL", torch.cuda.nccl.version(), "torch", torch.__version__)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
