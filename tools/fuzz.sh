#!/usr/bin/env bash
# tools/fuzz.sh SECONDS [TARGET...] — long libFuzzer runs of `make fuzz`'s
# targets (default: all), two at a time, at nice 19 (the machine is
# shared). Each run keeps its own corpus, log and CPU account under
# build/fuzz/runs/TARGET/, starting from tests/fuzz/corpus/TARGET/ (never
# modified: copy a crash-* input there by hand, once fixed, as a
# regression). Prints, per target, CPU seconds (user+sys, from
# /usr/bin/time), executions, cov and ft (libFuzzer's last status line)
# and crashes: the figures docs/reliability.md's "Fuzzing" section keeps.
#   make fuzz && tools/fuzz.sh 600
#   tools/fuzz.sh report        (the table of the runs so far)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=build/fuzz/runs
JOBS=${FUZZ_JOBS:-2}

report() {
	printf '%-10s %9s %12s %6s %6s %7s\n' target cpu_s execs cov ft crashes
	local tot=0 d t cpu ex last
	for d in "$RUNS"/*/; do
		t=$(basename "$d")
		[[ -f $d/cpu ]] || continue
		# A target may have been run several times: sum them.
		# /usr/bin/time appends "USER SYS" per run (and a line of its
		# own when the fuzzer exits non-zero: not numbers, skipped).
		cpu=$(awk '$1 ~ /^[0-9.]+$/ {s += $1 + $2} END {printf "%.0f", s}' "$d/cpu")
		ex=$(grep -h '^stat::number_of_executed_units' "$d"/log.* | awk '{s += $2} END {print s}')
		last=$(grep -h -E '^#[0-9]+' "$d"/log.* | tail -n 1)
		printf '%-10s %9s %12s %6s %6s %7s\n' "$t" "$cpu" "$ex" \
			"$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")" \
			"$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")" \
			"$(find "$d" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' -o -maxdepth 1 -name 'timeout-*' | wc -l)"
		tot=$((tot + cpu))
	done
	echo "total CPU seconds: $tot"
}

one() { # target seconds
	local t=$1 s=$2 d=$RUNS/$1 n
	mkdir -p "$d/corpus"
	n=$(find "$d" -maxdepth 1 -name 'log.*' | wc -l)
	# -timeout 10: a input that takes that long is a hang worth keeping.
	( cd "$d" && nice -n 19 /usr/bin/time -f '%U %S' -a -o cpu \
		"$OLDPWD/build/fuzz/fuzz_$t" -max_total_time="$s" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=./ \
		corpus "$OLDPWD/tests/fuzz/corpus/$t" ) >"$d/log.$n" 2>&1 || true
	echo "$t done: $(tail -n 1 "$d/cpu") (user sys seconds)"
}

[[ ${1:-} == report ]] && { report; exit 0; }
secs=${1:?usage: tools/fuzz.sh SECONDS [TARGET...] | report}
shift
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
	for f in tests/fuzz/fuzz_*.c; do t=${f#tests/fuzz/fuzz_}; targets+=("${t%.c}"); done
fi
for t in "${targets[@]}"; do
	[[ -x build/fuzz/fuzz_$t ]] || { echo "fuzz.sh: build/fuzz/fuzz_$t not built (make fuzz)" >&2; exit 1; }
done
for t in "${targets[@]}"; do
	while (($(jobs -rp | wc -l) >= JOBS)); do wait -n || true; done
	one "$t" "$secs" &
done
wait
report
