#!/usr/bin/env python3
"""Time ops under gpucalc's two measurement conditions on one GPU.

cold/eager: before each call, L2 is flushed by writing a 256 MiB buffer;
each call is launched from Python and timed alone with CUDA events (the
median of N calls), as triton's do_bench measures.
warm/graph: REPS calls are captured in one CUDA graph and replayed with no
flush; the time per call is the replay's time / REPS (median of replays),
as aiconfigurator's collector measures.

Writes conditions_<gpu>.csv: spec (a gpucalc --op spec), cold_eager_us,
warm_graph_us. usage: conditions.py --out DIR
"""
import argparse, csv, os, statistics, sys, time
import torch
import torch.nn.functional as F

REPS, N = 20, 30
FLUSH = None


def cold_eager(fn):
    ts = []
    for _ in range(N + 3):
        FLUSH.zero_()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) * 1e3)
    return statistics.median(ts[3:])


def warm_graph(fn):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(REPS):
            fn()
    for _ in range(3):
        g.replay()
    ts = []
    for _ in range(N):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) * 1e3 / REPS)
    return statistics.median(ts)


def gemm(m, n, k):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    return f"matmul m={m} n={n} k={k} dtype=bf16", lambda: torch.mm(a, w)


def attn(b, h, kv, sq, sk, d):
    q = torch.randn(b, h, sq, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b, kv, sk, d, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b, kv, sk, d, device="cuda", dtype=torch.bfloat16)
    causal = sq == sk
    spec = f"attention b={b} h={h} kv={kv} sq={sq} sk={sk} d={d}" + (" causal" if causal else "")
    def fn():
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=kv != h)
    return spec, fn


def copy(n):
    x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    return f"copy n={n} dtype=bf16", lambda: y.copy_(x)


CASES = [
    lambda: copy(1),
    lambda: copy(1 << 20),
    lambda: copy(1 << 24),
    lambda: gemm(16, 4096, 4096),
    lambda: gemm(64, 4096, 4096),
    lambda: gemm(128, 1024, 1024),
    lambda: gemm(256, 2048, 2048),
    lambda: gemm(1024, 4096, 4096),
    lambda: gemm(16, 14336, 4096),
    lambda: gemm(4096, 4096, 4096),
    lambda: gemm(8192, 8192, 8192),
    lambda: attn(1, 32, 8, 512, 512, 128),
    lambda: attn(4, 32, 8, 2048, 2048, 128),
    lambda: attn(1, 8, 8, 4096, 4096, 128),
    lambda: attn(1, 4, 1, 2048, 2048, 128),
    lambda: attn(8, 32, 8, 1, 1024, 128),
    lambda: attn(32, 32, 8, 1, 4096, 128),
    lambda: attn(64, 8, 1, 1, 2048, 128),
    lambda: attn(1, 16, 16, 1024, 1024, 64),
]


def main():
    global FLUSH
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=200)
    args = ap.parse_args()
    start = time.time()
    FLUSH = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    name = torch.cuda.get_device_name().replace(" ", "_")
    path = os.path.join(args.out, "conditions.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["device", "spec", "cold_eager_us", "warm_graph_us"])
        for case in CASES:
            if time.time() - start > args.budget:
                print("budget spent", file=sys.stderr)
                break
            try:
                spec, fn = case()
                ce, wg = cold_eager(fn), warm_graph(fn)
                w.writerow([name, spec, "%.3f" % ce, "%.3f" % wg])
                f.flush()
                print(spec, "%.2f" % ce, "%.2f" % wg, flush=True)
            except Exception as e:  # one failing shape must not lose the rest
                print("failed:", e, file=sys.stderr, flush=True)
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
