#!/usr/bin/env python3
"""Copy aiconfigurator's calibration op tables into roofline/testdata/peer/.

Source: NVIDIA aiconfigurator (github.com/ai-dynamo/aiconfigurator, Apache-2.0),
per-op timings taken in a CUDA graph with a warm L2 (see docs/measured.md).
For each GPU and op kind it keeps the columns the scoring test reads and, where
several kernels were timed for one configuration, the fastest (the good
kernel), and for attention the engine backend that ran it (kernel_source:
SGLang's fa3, flashinfer, trtllm_mha or triton). Latencies stay in milliseconds. Rows beyond --max per table are
dropped with a fixed seed.

usage: extract.py PEER_DIR OUT_DIR
"""
import csv, gzip, os, random, sys

GPUS = ["a100_sxm", "h100_sxm", "b200_sxm", "l40s"]
KINDS = {
    "gemm": ["gemm_dtype", "m", "n", "k"],
    "context_attention": ["batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim",
                          "window_size", "attn_dtype", "kv_cache_dtype"],
    "generation_attention": ["batch_size", "isl", "step", "num_heads", "num_key_value_heads",
                             "head_dim", "window_size", "attn_dtype", "kv_cache_dtype"],
    "nccl": ["op_name", "num_gpus", "message_size"],
}
KEEP_GEMM = {"bfloat16", "fp8", "fp8_block", "nvfp4"}
# Tables whose rows also name the kernel that ran the fastest time.
SOURCED = {"context_attention", "generation_attention"}


def main(src, out, most=8000):
    for g in GPUS:
        for kind, cols in KINDS.items():
            best = {}
            with gzip.open(os.path.join(src, g, kind + ".csv.gz"), "rt") as f:
                for r in csv.DictReader(f):
                    if kind == "gemm" and r["gemm_dtype"] not in KEEP_GEMM:
                        continue
                    if kind == "nccl" and r["nccl_dtype"] != "half":
                        continue
                    key = tuple(r.get(c, "0") or "0" for c in cols)
                    lat = float(r["latency"])
                    if key not in best or lat < best[key][0]:
                        best[key] = (lat, r.get("kernel_source", ""))
            keys = sorted(best)
            if len(keys) > most:
                keys = sorted(random.Random(37).sample(keys, most))
            path = os.path.join(out, f"{g}_{kind}.csv.gz")
            with gzip.GzipFile(path, "wb", mtime=0) as z:
                extra = ["kernel_source"] if kind in SOURCED else []
                z.write((",".join(cols + extra + ["latency_ms"]) + "\n").encode())
                for k in keys:
                    lat, ks = best[k]
                    z.write((",".join(list(k) + ([ks] if extra else [])) + ",%.6g\n" % lat).encode())
            print(path, len(best), "->", len(keys), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
