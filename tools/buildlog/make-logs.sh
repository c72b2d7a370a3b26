#!/bin/sh
# make-logs.sh OUTDIR: builds kernels.cu and spill.cu for sm_80 and sm_90 and
# writes the fixtures of gpucalc's build-log importer into OUTDIR:
#   ptxas-smXX.txt      nvcc -Xptxas -v output (the nvcc command lines echoed
#                       before each, as a make log shows them)
#   cuobjdump-smXX.txt  cuobjdump --dump-resource-usage of the linked binary
#   attributes-sm90.csv cudaFuncGetAttributes for each kernel (needs a cc 9.0
#                       GPU; skipped with a message when the binary cannot run)
# Needs the CUDA toolkit (nvcc, cuobjdump) on PATH.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: make-logs.sh OUTDIR}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for sm in 80 90; do
	log="$out/ptxas-sm$sm.txt"
	: >"$log"
	build() {
		echo "nvcc $*" >>"$log"
		nvcc "$@" 2>>"$log"
	}
	build -arch=sm_$sm -O3 -Xptxas -v -c "$here/kernels.cu" -o "$tmp/kernels.o"
	build -arch=sm_$sm -O3 -maxrregcount=32 -Xptxas -v -c "$here/spill.cu" -o "$tmp/spill.o"
	nvcc -arch=sm_$sm "$tmp/kernels.o" "$tmp/spill.o" -o "$tmp/kernels-sm$sm"
	cuobjdump --dump-resource-usage "$tmp/kernels-sm$sm" >"$out/cuobjdump-sm$sm.txt"
done
# Paths in the logs are relative to the repository, not this machine.
sed -i "s|$here/|tools/buildlog/|g; s|$tmp/|build/|g" "$out"/ptxas-sm*.txt "$out"/cuobjdump-sm*.txt

if ! "$tmp/kernels-sm90" >"$out/attributes-sm90.csv"; then
	echo "make-logs.sh: kernels-sm90 did not run (no cc 9.0 GPU?); attributes-sm90.csv is incomplete" >&2
	exit 1
fi
