#!/usr/bin/env python3
"""Writes roofline/data/triton_moe.yaml: SGLang's tuned Triton fused-MoE
configurations for the GPUs gpucalc checks, read from a git checkout of
github.com/sgl-project/sglang at a given commit.

usage: catalog.py SGLANG_GIT_DIR COMMIT > roofline/data/triton_moe.yaml

SGLang looks a configuration up by file name (fused_moe_triton_config.py,
get_config_file_name): E (the experts on the GPU), N (an expert's width on
the GPU), the CUDA device name, the dtype and the block shape; first in the
folder of the running Triton version, then in every other triton_* folder,
newest first. This keeps, per file name, the newest folder's copy, for the
device names below and the two dtypes the moe op's Triton path runs (bf16:
no dtype; fp8_block: fp8_w8a8 with 128x128 blocks).
"""
import json, re, subprocess, sys

DEVICES = [
    "NVIDIA_A100-SXM4-80GB", "NVIDIA_H100_80GB_HBM3", "NVIDIA_H200", "NVIDIA_B200",
    "NVIDIA_B300", "NVIDIA_GB200", "NVIDIA_GB300", "NVIDIA_L40S",
    "NVIDIA_RTX_PRO_6000_Blackwell_Server_Edition",
]
DTYPES = ["", ",dtype=fp8_w8a8,block_shape=[128, 128]"]
FOLDER = "python/sglang/srt/layers/moe/moe_runner/triton_utils/configs/"

def git(*a):
    return subprocess.run(["git", "-C", sys.argv[1], *a], check=True, capture_output=True, text=True).stdout

def main():
    commit = sys.argv[2]
    names = [p for p in git("ls-tree", "-r", "--name-only", commit, FOLDER).splitlines()]
    pat = re.compile(r"^E=(\d+),N=(\d+),device_name=(.+?)(,dtype=.*?)?(_down)?\.json$")
    best = {}
    for p in names:
        rel = p[len(FOLDER):]
        if "/" not in rel:
            continue
        folder, name = rel.split("/", 1)
        m = pat.match(name)
        if not folder.startswith("triton_") or not m:
            continue
        if m.group(3) not in DEVICES or (m.group(4) or "") not in DTYPES:
            continue
        ver = tuple(int(x) for x in folder[len("triton_"):].split("_"))
        if name not in best or ver > best[name][0]:
            best[name] = (ver, rel)
    date = git("log", "-1", "--format=%cd", "--date=short", commit).strip()
    print("# SGLang's tuned Triton fused-MoE configurations (github.com/sgl-project/sglang,")
    print(f"# Apache-2.0) at commit {commit[:12]} ({date}, the tree of SGLang 0.5.14),")
    print(f"# {FOLDER}.")
    print("# Written by tools/moeconfigs/catalog.py; each entry is one file of that folder,")
    print("# its name the key SGLang looks the configuration up by (E experts on the GPU,")
    print("# N an expert's width on the GPU, the CUDA device name, dtype, block shape;")
    print("# _down: the down projection's own configuration). Each row maps a token")
    print("# count M to [BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K, GROUP_SIZE_M,")
    print("# num_warps, num_stages] (Triton's defaults, 4 warps and 3 stages, where the")
    print("# file names none); SGLang runs the row of the nearest M.")
    print(f"source: \"github.com/sgl-project/sglang@{commit[:12]}:{FOLDER}\"")
    print("files:")
    for name in sorted(best, key=lambda n: best[n][1]):
        rel = best[name][1]
        cfg = json.loads(git("show", f"{commit}:{FOLDER}{rel}"))
        print(f"  - path: \"{rel}\"")
        print("    m:")
        for k, v in cfg.items():
            row = [v["BLOCK_SIZE_M"], v["BLOCK_SIZE_N"], v["BLOCK_SIZE_K"], v.get("GROUP_SIZE_M", 1), v.get("num_warps", 4), v.get("num_stages", 3)]
            print(f"      {int(k)}: [{', '.join(str(x) for x in row)}]")

main()
