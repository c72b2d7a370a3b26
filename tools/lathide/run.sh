#!/bin/sh
# run.sh OUT.csv: builds lathide.cu for the GPU at hand and writes its curves
# to OUT.csv (progress and skipped points go to stderr). Needs nvcc and an
# NVIDIA GPU; takes under a minute on an H100.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUT.csv}
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n1 | tr -d .)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nvcc -O3 -arch="sm_$cc" -o "$tmp/lathide" "$here/lathide.cu"
"$tmp/lathide" >"$out"
