#!/bin/sh
# Assembles MODELS_DIR (one folder per model holding its config.json), the layout the measuring
# scripts under tools/ read, from gpucalc's built-in configs (model/configs/NAME.json) and the
# published configs kept here (tools/models/NAME/config.json) for models that are not built in.
# usage: tools/models/assemble.sh DIR; then MODELS_DIR=DIR python3 SCRIPT ...
set -eu
dir=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
for f in "$root"/model/configs/*.json; do
	n=$(basename "$f" .json)
	mkdir -p "$dir/$n" && cp "$f" "$dir/$n/config.json"
done
for d in "$root"/tools/models/*/; do
	n=$(basename "$d")
	mkdir -p "$dir/$n" && cp "$d/config.json" "$dir/$n/config.json"
done
