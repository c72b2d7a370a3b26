#!/usr/bin/env python3
"""Measure the GPU at hand and write a gpucalc device file (issue 10).

Builds and runs measure.cu (bandwidths, FMA peaks, launch overhead, latencies),
times tensor GEMMs through PyTorch (cuBLAS), and writes a YAML device file whose
`measured:` section `gpucalc --device-file FILE` (or GPUCALC_DEVICES) reads.

    python3 tools/measure/measure.py --name "H100 SXM" -o h100.yaml --log-dir logs/

Requirements: an NVIDIA GPU and driver, the CUDA toolkit (nvcc) on PATH,
Python 3.9+ with a CUDA build of PyTorch, and nvidia-smi. See README.md.
"""
import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))

# GEMM shapes (M, N, K): large squares and the large shapes of the ground
# truth's roof_bench.csv; the best median of each data type is reported.
SHAPES = [
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (2048, 4096, 4096),
    (4096, 14336, 4096),
    (4096, 4096, 14336),
    (16384, 4096, 4096),
]
GEMM_REPS = 100
GEMM_ROUNDS = 3


def run(cmd):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout


def micro(cc):
    """Builds measure.cu for compute capability cc ("90") and runs it."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "measure")
        run(["nvcc", "-O3", f"-arch=sm_{cc}", "-o", exe, os.path.join(HERE, "measure.cu")])
        out = run([exe])
    vals = {}
    for line in out.splitlines():
        k, _, v = line.partition("=")
        vals[k] = v
    return out, vals


def median_ms(fn, flush):
    """Median time of GEMM_REPS runs of fn, L2 flushed before each (as
    triton.testing.do_bench does), after a few warm-up runs."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(GEMM_REPS)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(GEMM_REPS)]
    for s, e in zip(starts, ends):
        flush.zero_()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def operands(key, m, n, k):
    """Random operands and the product for a peak key; variants name modes."""
    dev = "cuda"
    if key in ("tf32_tensor", "fp64_tensor", "bf16_tensor", "fp16_tensor"):
        dt = {"tf32_tensor": torch.float32, "fp64_tensor": torch.float64,
              "bf16_tensor": torch.bfloat16, "fp16_tensor": torch.float16}[key]
        a = torch.randn(m, k, device=dev, dtype=dt)
        b = torch.randn(k, n, device=dev, dtype=dt)
        return {"": lambda: torch.matmul(a, b)}
    if key == "fp8_tensor":
        # e4m3 inputs, bf16 output; cuBLASLt wants B column-major.
        a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()
        one = torch.tensor(1.0, device=dev)
        return {
            "": lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
            "fast_accum": lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                                   use_fast_accum=True),
        }
    if key == "int8_tensor":
        # B column-major: cuBLASLt's int8 tensor-core kernel (IMMA). A row-major
        # B takes a fallback that runs at about 130 TOP/s on Hopper.
        a = torch.randint(-128, 127, (m, k), device=dev, dtype=torch.int8)
        b = torch.randint(-128, 127, (n, k), device=dev, dtype=torch.int8).t()
        return {"": lambda: torch._int_mm(a, b)}
    raise ValueError(key)


GEMM_KEYS = ["tf32_tensor", "bf16_tensor", "fp16_tensor", "fp8_tensor", "int8_tensor", "fp64_tensor"]


def gemms():
    """Returns {key: (tflops, label)} of the best shapes and a CSV of all.

    Each shape is timed in GEMM_ROUNDS rounds over all keys and shapes (so
    that a passing clock or power state does not favour one shape) and rated
    by the median of its rounds' medians."""
    torch.set_float32_matmul_precision("high")  # fp32 products use tf32: the tf32 peak
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    times = {}  # (key, variant, m, n, k) -> [ms per round]
    for rnd in range(GEMM_ROUNDS):
        for key in GEMM_KEYS:
            for m, n, k in SHAPES:
                try:
                    variants = operands(key, m, n, k)
                    for variant, fn in variants.items():
                        ms = median_ms(fn, flush)
                        times.setdefault((key, variant, m, n, k), []).append(ms)
                        print(f"gemm round {rnd} {key} {variant or 'default'} {m}x{n}x{k}: {ms:.4f} ms, "
                              f"{2 * m * n * k / (ms * 1e9):.1f} TFLOP/s", file=sys.stderr)
                    del variants
                except (RuntimeError, ValueError) as e:
                    print(f"gemm {key} {m}x{n}x{k}: {e}", file=sys.stderr)
                torch.cuda.empty_cache()
    best = {}
    rows = ["key,variant,m,n,k," + ",".join(f"ms_round{r}" for r in range(GEMM_ROUNDS)) + ",ms,tflops"]
    for (key, variant, m, n, k), ts in times.items():
        ms = statistics.median(ts)
        tflops = 2 * m * n * k / (ms * 1e9)
        rows.append(f"{key},{variant},{m},{n},{k}," + ",".join(f"{t:.4f}" for t in ts) + f",{ms:.4f},{tflops:.1f}")
        label = f"{m}x{n}x{k}" + (f" {variant}" if variant else "")
        if tflops > best.get(key, (0, ""))[0]:
            best[key] = (tflops, label)
    return best, "\n".join(rows) + "\n"


def smi():
    fields = ["name", "driver_version", "clocks.max.sm", "clocks.max.mem", "clocks.sm", "clocks.mem",
              "power.limit"]
    out = run(["nvidia-smi", "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"])
    return dict(zip(fields, (x.strip() for x in out.splitlines()[0].split(","))))


def nvcc_release():
    for line in run(["nvcc", "--version"]).splitlines():
        if "release" in line:
            return line.split("release")[1].split(",")[0].strip()
    return "unknown"


def num(v):
    """v with four significant digits and no exponent."""
    digits = max(0, 3 - int(math.floor(math.log10(abs(v))))) if v else 0
    return f"{v:.{digits}f}"


def rate(v, unit):
    """A decimal rate: 3.031TB/s, 735.6TFLOPS, 812.5GB/s."""
    return f"{num(v / 1e12)}T{unit}" if v >= 1e12 else f"{num(v / 1e9)}G{unit}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--name", help="catalog device name the file overrides (default: the name the driver "
                                   "reports, which the catalog knows as an alias for its parts)")
    ap.add_argument("-o", "--output", default="-", help="device file to write (default: stdout)")
    ap.add_argument("--log-dir", help="also write the raw figures (micro.txt) and every GEMM timing (gemm.csv) here")
    args = ap.parse_args()

    if not torch.cuda.is_available():
        sys.exit("measure.py: PyTorch sees no CUDA GPU")
    cc = "%d%d" % torch.cuda.get_device_capability(0)
    info = smi()
    nvcc = nvcc_release()
    print(f"measuring {info['name']} (sm_{cc}), driver {info['driver_version']}, nvcc {nvcc}, "
          f"PyTorch {torch.__version__}", file=sys.stderr)

    raw, v = micro(cc)
    best, gemm_csv = gemms()
    if args.log_dir:
        os.makedirs(args.log_dir, exist_ok=True)
        with open(os.path.join(args.log_dir, "micro.txt"), "w") as f:
            f.write(raw)
        with open(os.path.join(args.log_dir, "gemm.csv"), "w") as f:
            f.write(gemm_csv)

    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    copy_kernel, copy_memcpy = float(v["dram_copy_kernel_GBps"]), float(v["dram_copy_memcpy_GBps"])
    bf16 = best.get("bf16_tensor", (0, "not measured"))
    how = (
        f"gpucalc tools/measure on {info['name']}, driver {info['driver_version']}, CUDA {torch.version.cuda} "
        f"(nvcc {nvcc}, measure.cu built for sm_{cc}), PyTorch {torch.__version__} (cuBLAS) for GEMMs; "
        f"clocks: SM max {info['clocks.max.sm']} MHz, memory {info['clocks.max.mem']} MHz, power limit "
        f"{info['power.limit']} W, clocks left as found. "
        f"DRAM: 4 GiB buffers, 16-byte accesses; copy counts bytes read plus written, best of a copy kernel "
        f"({num(copy_kernel)} GB/s) and cudaMemcpy device to device ({num(copy_memcpy)} GB/s). "
        f"L2: L2-only reads (ld.global.cg) of a {v['l2_buffer_MiB']} MiB buffer. smem: conflict-free 16-byte "
        f"shared loads at full occupancy. fp32/fp64: 8 independent FMA chains per thread at full occupancy. "
        f"Tensor peaks: best median over GEMM shapes {', '.join('x'.join(map(str, s)) for s in SHAPES)} "
        f"(random inputs, L2 flushed before each run; per shape the median of {GEMM_ROUNDS} rounds of "
        f"{GEMM_REPS}-run medians; bf16 best at {bf16[1]}; fp8 is e4m3 "
        f"in, bf16 out via torch._scaled_mm; int8 via torch._int_mm with B column-major). Launch overhead: back-to-back empty "
        f"kernels on one stream. Latencies: one thread, SM cycles (clock64) per dependent access: pointer "
        f"chases through a random ring of 128-byte lines (L1: 4 KiB, ld.global.ca; L2: 8 MiB, ld.global.cg; "
        f"DRAM: cold lines of a 64 MiB ring after evicting L2), shared-memory loads, fp32 FMAs. Medians of "
        f"20 runs (CUDA events) unless stated."
    )
    source = (f"gpucalc tools/measure/measure.py on {info['name']} (driver {info['driver_version']}, "
              f"CUDA {torch.version.cuda}, PyTorch {torch.__version__}), {when}")
    lines = [
        "# Measured with gpucalc's tools/measure (see tools/measure/README.md). Overrides the",
        "# catalog entry's achievable figures: gpucalc --device-file THIS_FILE ...",
        f"name: {json.dumps(args.name or info['name'])}",
        "sources:",
        f"  measure: {json.dumps(source)}",
        "measured:",
        f"  how: {json.dumps(how)}",
        f"  when: \"{when}\"",
    ]

    def q(key, value, indent="  "):
        lines.append(f"{indent}{key}: {{value: {value}, source: measure}}")

    q("dram_read", rate(float(v["dram_read_GBps"]) * 1e9, "B/s"))
    q("dram_write", rate(float(v["dram_write_GBps"]) * 1e9, "B/s"))
    q("dram_copy", rate(max(copy_kernel, copy_memcpy) * 1e9, "B/s"))
    q("l2", rate(float(v["l2_GBps"]) * 1e9, "B/s"))
    q("smem", rate(float(v["smem_GBps"]) * 1e9, "B/s"))
    lines.append("  peaks:")
    q("fp32", rate(float(v["fp32_GFLOPS"]) * 1e9, "FLOPS"), "    ")
    q("fp64", rate(float(v["fp64_GFLOPS"]) * 1e9, "FLOPS"), "    ")
    for key in GEMM_KEYS:
        if key in best:
            q(key, rate(best[key][0] * 1e12, "OPS" if key == "int8_tensor" else "FLOPS"), "    ")
    q("launch_overhead", f"{num(float(v['launch_us']))}us")
    lines.append("  latency_cycles:")
    for name in ["l1", "l2", "dram", "smem", "fma"]:
        q(name, f"{float(v['lat_' + name + '_cycles']):.0f}", "    ")
    text = "\n".join(lines) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    print(text, file=sys.stderr)


if __name__ == "__main__":
    main()
