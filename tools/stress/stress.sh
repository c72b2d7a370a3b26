#!/usr/bin/env bash
# stress.sh: every gpucalc command that reads input, fed up to 2 GB of bad
# (and of valid) input under a 2 GiB address-space limit (ulimit -v). Each
# must answer or refuse within 10 s and never crash (no Go fatal error, no
# panic, no signal). Not run by .ci/run: it takes minutes and 2 GB of pipe
# traffic per case. Usage: tools/stress/stress.sh [SIZE] (default 2G, as
# head -c takes it). Prints one line per case and exits 1 if any failed.
# tools/stress/testdata/results-2G.txt is a run on a development machine
# (2 shared cores).
#
# A command that streams its answer (occupancy batch on valid rows) may still
# be writing rows at the time limit: it counts as answering when it wrote
# output within the limit and did not crash; the line says how much.
set -u
cd "$(dirname "$0")/../.."
SIZE=${1:-2G}
LIMIT_KB=$((2 * 1024 * 1024))
TIMEOUT=10
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/gpucalc" ./cmd/gpucalc || exit 1

occ_header=device,threads,regs,static_smem,dynamic_smem,carveout
roof_header=op,dtype,shape,note

# gen NAME writes input NAME, cut at SIZE bytes, to stdout.
gen() {
	case $1 in
	zeros) head -c "$SIZE" /dev/zero ;;
	random) head -c "$SIZE" /dev/urandom ;;
	no-newline) yes a | tr -d '\n' | head -c "$SIZE" ;;
	short-lines) yes x | head -c "$SIZE" ;;
	unclosed-quote) { printf '"'; yes a; } | head -c "$SIZE" ;;
	occ-header+random) { echo $occ_header; head -c "$SIZE" /dev/urandom; } | head -c "$SIZE" ;;
	occ-header+garbage-rows) { echo $occ_header; yes x,x,x,x,x,x; } | head -c "$SIZE" ;;
	occ-header+long-field) { echo $occ_header; printf sm_90,; yes 1 | tr -d '\n'; } | head -c "$SIZE" ;;
	occ-valid-rows) { echo $occ_header; yes sm_90,256,64,0,49152,; } | head -c "$SIZE" ;;
	roof-header+garbage-rows) { echo $roof_header; yes x,x,x,x; } | head -c "$SIZE" ;;
	roof-valid-rows) { echo $roof_header; yes matmul,bf16,64x64x64,; } | head -c "$SIZE" ;;
	ptxas-entries) yes "ptxas info    : Compiling entry function 'k' for 'sm_90'" | head -c "$SIZE" ;;
	yaml-nesting) yes -- '- [' | head -c "$SIZE" ;;
	workload-max-ops) echo 'name: x'; echo 'ops:'; seq 1 10000 | sed 's/.*/  - {name: a&, op: matmul m=4096 n=4096 k=4096}/' ;;
	# Bounded readers (issue 25): gzip bombs, blank space in JSON, a mangled
	# name that demangles to gigabytes, implausible numbers. (Gigabytes of
	# valid trace events or ncu rows are read whole before any output, which
	# takes longer than TIMEOUT and more than the address-space limit: the
	# benchmarks BenchmarkRead2MKernels and BenchmarkRead1MRows measure them.)
	gzip-zeros) head -c "$SIZE" /dev/zero | gzip -1 ;;
	gzip-blank-trace) { printf '{"traceEvents":['; tr '\0' ' ' </dev/zero; } | head -c "$SIZE" | gzip -1 ;;
	blank-trace) { printf '{"traceEvents":[{"ph":"X",'; tr '\0' ' ' </dev/zero; } | head -c "$SIZE" ;;
	nested-mangled-log) nested_log ;;
	trace-two-gpus) printf '%s' '{"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3","computeMajor":9,"computeMinor":0},{"id":1,"name":"NVIDIA A100-SXM4-80GB","computeMajor":8,"computeMinor":0}],"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":1,"dur":9,"args":{"External id":1,"Input Dims":[[64,64],[64,64]],"Input type":["float","float"]}},{"ph":"X","cat":"kernel","name":"k","ts":2,"dur":2,"args":{"External id":1,"device":0}},{"ph":"X","cat":"kernel","name":"k","ts":5,"dur":2,"args":{"External id":1,"device":1}}]}' ;;
	trace-negative) printf '%s' '{"deviceProperties":[{"name":"NVIDIA H100 80GB HBM3","computeMajor":9,"computeMinor":0}],"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":1,"dur":9,"args":{"External id":1,"Input Dims":[[64,64],[64,64]],"Input type":["float","float"]}},{"ph":"X","cat":"kernel","name":"k","ts":2,"dur":-2,"args":{"External id":1}}]}' ;;
	ncu-decimal-comma) { echo "$ncu_header"; echo "$ncu_units"; echo "${ncu_row/\"2.5\"/\"2,5\"}"; } ;;
	ncu-implausible) { echo "$ncu_header"; echo "$ncu_units"; echo "${ncu_row/\"2.5\"/\"9,000,000,000\"}"; echo "${ncu_row/\"2.5\"/\"-1\"}"; } ;;
	esac
}

ncu_header='"ID","Process ID","Kernel Name","Block Size","Grid Size","device__attribute_display_name","gpu__time_duration.sum","dram__bytes_read.sum","dram__bytes_write.sum"'
ncu_units='"","","","","","","usecond","Mbyte","byte"'
ncu_row='"0","1","void k<float>(float *, int)","(256, 1, 1)","(1024, 1, 1)","NVIDIA H100 80GB HBM3","1.5","2.5","1,000"'

# nested_log is an 818-byte-class ptxas log whose one kernel's mangled name
# nests 30 levels, each naming the level below twice: demangled in full it
# would be gigabytes.
nested_log() {
	local inner=1AIiiE digits=0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ j
	for ((j = 2; j <= 30; j++)); do inner="S_I${inner}S${digits:j-2:1}_E"; done
	printf "ptxas info    : Compiling entry function '_Z1fI%sEvT_' for 'sm_90'\nptxas info    : Used 8 registers\n" "$inner"
}

inputs="zeros random no-newline short-lines unclosed-quote occ-header+random occ-header+garbage-rows
occ-header+long-field occ-valid-rows roof-header+garbage-rows roof-valid-rows ptxas-entries yaml-nesting
workload-max-ops gzip-zeros gzip-blank-trace blank-trace nested-mangled-log trace-two-gpus trace-negative
ncu-decimal-comma ncu-implausible"
# STRESS_INPUTS and STRESS_COMMANDS (a regular expression) pick a subset.
inputs=${STRESS_INPUTS:-$inputs}

commands=(
	"occupancy batch --input -"
	"roofline batch --input -"
	"occupancy from-build -"
	"ncu -"
	"check -"
	"roofline --workload /dev/stdin"
	"roofline --workload /dev/stdin --devices h100,a100,h200 --plot $work/chart.png"
	"devices --device-file /dev/stdin"
	"trace -"
)

printf '%-34s %-26s %4s %7s  %s\n' command input exit seconds "verdict: first line of stderr"
failed=0
for c in "${commands[@]}"; do
	[[ $c =~ ${STRESS_COMMANDS:-.} ]] || continue
	for in in $inputs; do
		start=$(date +%s.%N)
		(
			ulimit -v $LIMIT_KB
			gen "$in" | timeout -k 1 $TIMEOUT "$work/gpucalc" $c 2>"$work/err" | wc -c >"$work/out"
			exit "${PIPESTATUS[1]}"
		)
		rc=$?
		secs=$(echo "$(date +%s.%N) - $start" | bc)
		msg=$(head -n 1 "$work/err" | cut -c 1-110)
		verdict=ok
		out=$(cat "$work/out")
		if grep -qE '^(fatal error|panic:|goroutine )|runtime: out of memory' "$work/err"; then
			verdict="CRASH"
		elif { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && [ "$out" -gt 0 ]; then
			msg="still streaming at ${TIMEOUT} s, $out bytes of output written"
		elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
			verdict="TIMEOUT"
		elif [ $rc -gt 2 ] || grep -qE '^(fatal error|panic:|goroutine )|runtime: out of memory' "$work/err"; then
			verdict="CRASH"
		fi
		[ "$verdict" = ok ] || failed=1
		printf '%-34s %-26s %4s %7.2f  %s: %s\n' "${c//$work/\$WORK}" "$in" "$rc" "$secs" "$verdict" "${msg//$work/\$WORK}"
	done
done
# The server: gpucalc serve fed what a page of another site or a hostile
# local client can send. Each request must be answered (a refusal is an
# answer) within 10 s, the server must stay up and answer the next one, and
# its peak resident memory must stay under 1 GiB. Its address space is
# limited to 4 GiB, not 2: a long-lived Go process with its threads reserves
# about 1.7 GiB of address space it never touches.
SERVE_LIMIT_KB=$((4 * 1024 * 1024))
SERVE_RSS_KB=$((1024 * 1024))
(
	ulimit -v $SERVE_LIMIT_KB
	exec "$work/gpucalc" serve --addr 127.0.0.1:0 2>"$work/serve.err"
) &
serve_pid=$!
url=
for _ in $(seq 100); do
	url=$(grep -o 'http://127.0.0.1:[0-9]*/' "$work/serve.err" | head -n 1)
	[ -n "$url" ] && break
	sleep 0.1
done
api="${url}api"
# A gzip member of 64 MiB of one byte, repeated: a 6 MiB file that expands
# to 6 GiB.
srv_bomb() { # HEAD FILLBYTE
	printf '%s' "$1" | gzip -9 >"$work/bomb"
	head -c 64M /dev/zero | tr '\0' "$2" | gzip -9 >"$work/member"
	for _ in $(seq 96); do cat "$work/member"; done >>"$work/bomb"
}
all_devices=$("$work/gpucalc" devices --format csv | awk -F, 'NR > 1 {print $1}' | head -n 17 | paste -sd, -)
H='X-Gpucalc-Request: 1'
srv_case() { # NAME then curl arguments
	local name=$1
	shift
	rm -f "$work/body"
	start=$(date +%s.%N)
	code=$(timeout -k 1 $TIMEOUT curl -s -o "$work/body" -w '%{http_code}' "$@")
	rc=$?
	secs=$(echo "$(date +%s.%N) - $start" | bc)
	rss=$(awk '/^VmHWM/ {print $2}' "/proc/$serve_pid/status" 2>/dev/null)
	msg="peak RSS $((${rss:-0} / 1024)) MiB; $(head -c 90 "$work/body" 2>/dev/null | tr '\n' ' ')"
	verdict=ok
	if ! kill -0 "$serve_pid" 2>/dev/null || grep -qE '^(fatal error|panic:|goroutine )|runtime: out of memory' "$work/serve.err"; then
		verdict=CRASH
	elif [ $rc -ne 0 ]; then
		verdict=TIMEOUT
	elif [ "${rss:-0}" -gt $SERVE_RSS_KB ]; then
		verdict=MEMORY
	elif [ "$code" -lt 400 ] && [ "$name" != still-answers ]; then
		verdict=SERVED
	fi
	[ "$verdict" = ok ] || failed=1
	printf '%-34s %-26s %4s %7.2f  %s: %s\n' "serve" "$name" "$code" "$secs" "$verdict" "$msg"
}
if [ -z "$url" ]; then
	echo "serve: did not start: $(head -n 1 "$work/serve.err")"
	failed=1
else
	srv_bomb '{"traceEvents": [{"name": "' a
	srv_case gzip-bomb-trace-string -H "$H" -F "file=@$work/bomb;filename=step.json.gz" "$api/report"
	srv_bomb '{"traceEvents": [' ' '
	srv_case gzip-bomb-trace-spaces -H "$H" -F "file=@$work/bomb;filename=step.json.gz" "$api/report"
	srv_bomb '' '\n'
	srv_case gzip-bomb-ncu-newlines -H "$H" -F "file=@$work/bomb;filename=profile.csv.gz" "$api/report"
	srv_case cross-site-form -H 'Origin: http://attacker.example' -H 'Sec-Fetch-Site: cross-site' -F "file=@$work/bomb;filename=step.json.gz" "$api/report"
	srv_case other-port-fetch -H "$H" -H "Origin: http://127.0.0.1:1" -H 'Sec-Fetch-Site: same-site' "$api/occupancy?device=h100"
	srv_case no-header-read "$api/model?devices=h100"
	srv_case layers-16M-all-devices -G -H "$H" --data-urlencode source=config --data-urlencode "devices=$all_devices" \
		--data-urlencode 'config={"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 16777216, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256, "intermediate_size": 14336}' "$api/model"
	srv_case ops-9000x17-devices -G -H "$H" --data-urlencode source=ops --data-urlencode "devices=$all_devices" \
		--data-urlencode "ops=$(yes 'copy n=1' | head -n 9000)" "$api/roofline"
	srv_case not-multipart -H "$H" -H 'Content-Type: application/x-www-form-urlencoded' --data 'file=x' "$api/report"
	head -c 65M /dev/zero | tr '\0' x >"$work/big"
	srv_case upload-over-64M -H "$H" -F "file=@$work/big;filename=big.csv" "$api/report"
	srv_case still-answers -H "$H" "$api/occupancy?device=h100&regs=64"
	[ "$code" = 200 ] || { echo "serve: the last, valid request got status $code"; failed=1; }
fi
kill "$serve_pid" 2>/dev/null
wait "$serve_pid" 2>/dev/null
exit $failed
