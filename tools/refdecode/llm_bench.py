"""Measure Hugging Face transformers causal LMs (random weights, bf16, sdpa) on one GPU.

For each model config under models/: weights bytes, prefill latency (no cache, last-token
logits only), and decode step latency with a StaticCache at a given context, both as wall
time per step (CUDA events) and as summed GPU kernel time (torch.profiler). Out-of-memory
configurations are recorded as such. Writes one CSV row per measurement to $OUT.

usage: python3 llm_bench.py OUTDIR MODEL [MODEL...]
"""
import csv, json, os, statistics, sys, time, traceback

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

T0 = time.time()
BUDGET = float(os.environ.get("BUDGET_S", "500"))
HERE = os.path.dirname(os.path.abspath(__file__))
PREFILL = [(1, 128), (1, 512), (1, 2048), (1, 8192), (1, 32768), (4, 2048), (8, 512)]
DECODE = [(1, 512), (1, 4096), (1, 32768), (8, 512), (8, 4096), (8, 16384), (32, 512), (32, 4096), (64, 512), (64, 4096)]


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


def load(name):
    cfg = AutoConfig.from_pretrained(os.path.join(os.environ.get("MODELS_DIR", os.path.join(HERE, "models")), name))
    with torch.device("cuda"):
        try:
            m = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16, attn_implementation="sdpa")
        except TypeError:
            m = AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.bfloat16, attn_implementation="sdpa")
    m = m.to(torch.bfloat16).eval()
    return cfg, m


def timed(fn, warm, reps):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


def gpu_time(fn, reps):
    """Summed device time of all kernels, memcpys and memsets per call, in ms."""
    from torch.profiler import profile, ProfilerActivity
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    tot = 0.0
    n = 0
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            tot += e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
            n += 1
    return tot / 1e3 / reps, n // reps


def make_cache(cfg, batch, length):
    from transformers import StaticCache
    try:
        c = StaticCache(config=cfg, max_cache_len=length)
    except TypeError:
        c = StaticCache(config=cfg, max_batch_size=batch, max_cache_len=length, device="cuda", dtype=torch.bfloat16)
    return c


def bench(name, rows, gpu):
    cfg, m = load(name)
    wbytes = sum(p.numel() * p.element_size() for p in m.parameters())
    nparams = sum(p.numel() for p in m.parameters())
    log(name, "params", nparams, "bytes", wbytes, "alloc", torch.cuda.memory_allocated())
    base = dict(gpu=gpu, model=name, params=nparams, weights_bytes=wbytes)
    V = cfg.vocab_size
    for b, s in PREFILL:
        if time.time() - T0 > BUDGET:
            log("budget: skip rest"); break
        r = dict(base, phase="prefill", batch=b, seq=s, ctx=0)
        try:
            ids = torch.randint(0, V, (b, s), device="cuda")
            with torch.inference_mode():
                f = lambda: m(input_ids=ids, use_cache=False, logits_to_keep=1)
                torch.cuda.reset_peak_memory_stats()
                r["wall_ms"] = timed(f, 2, 5)
                r["peak_bytes"] = torch.cuda.max_memory_allocated()
                r["gpu_ms"], r["kernels"] = gpu_time(f, 2)
            r["status"] = "ok"
        except torch.OutOfMemoryError:
            r["status"] = "oom"
        except Exception as e:
            r["status"] = "error: " + repr(e)[:200]
            traceback.print_exc()
        torch.cuda.empty_cache()
        log(r)
        rows.append(r)
    for b, ctx in DECODE:
        if time.time() - T0 > BUDGET:
            log("budget: skip rest"); break
        r = dict(base, phase="decode", batch=b, seq=1, ctx=ctx)
        cache = None
        try:
            torch.cuda.reset_peak_memory_stats()
            cache = make_cache(cfg, b, ctx + 32)
            ids = torch.randint(0, V, (b, 1), device="cuda")
            pos = [ctx]

            def step():
                p = pos[0]
                m(input_ids=ids, past_key_values=cache, use_cache=True,
                  cache_position=torch.tensor([p], device="cuda"),
                  position_ids=torch.full((b, 1), p, device="cuda"))
                pos[0] = p + 1 if p + 1 < ctx + 30 else ctx

            with torch.inference_mode():
                r["wall_ms"] = timed(step, 3, 10)
                r["peak_bytes"] = torch.cuda.max_memory_allocated()
                r["gpu_ms"], r["kernels"] = gpu_time(step, 3)
            r["cache_bytes"] = sum(t.numel() * t.element_size() for layer in getattr(cache, "layers", [])
                                   for t in (getattr(layer, "keys", None), getattr(layer, "values", None)) if t is not None)
            r["status"] = "ok"
        except torch.OutOfMemoryError:
            r["status"] = "oom"
        except Exception as e:
            r["status"] = "error: " + repr(e)[:200]
            traceback.print_exc()
        del cache
        torch.cuda.empty_cache()
        log(r)
        rows.append(r)
    del m
    torch.cuda.empty_cache()


def main():
    out, names = sys.argv[1], sys.argv[2:]
    gpu = torch.cuda.get_device_name(0)
    with open(os.path.join(out, "env.txt"), "a") as f:
        f.write(f"gpu={gpu} torch={torch.__version__} transformers={transformers.__version__} "
                f"cuda={torch.version.cuda} total_mem={torch.cuda.get_device_properties(0).total_memory}\n")
    rows = []
    for n in names:
        if time.time() - T0 > BUDGET:
            break
        try:
            bench(n, rows, gpu)
        except Exception:
            traceback.print_exc()
        keys = ["gpu", "model", "params", "weights_bytes", "phase", "batch", "seq", "ctx", "status",
                "wall_ms", "gpu_ms", "kernels", "peak_bytes", "cache_bytes"]
        tag = "h200" if "H200" in gpu else "h100" if "H100" in gpu else "gpu"
        with open(os.path.join(out, f"llm_bench_{tag}.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
