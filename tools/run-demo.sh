#!/usr/bin/env bash
# tools/run-demo.sh — what `sudo make run` does after building: profile the
# bundled demo (build/tests/demo, a toy request handler) for 3 seconds with
# the default cpu-clock event, print the 10 hottest functions, and say
# where the profile went and how to look at it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${PMUBPF_DEMO_OUT:-$PWD/demo.pb.gz}
if [[ $(id -u) -ne 0 ]]; then
	echo "pmubpf: the demo needs root to load BPF: run 'sudo make run'" >&2
	exit 1
fi
echo "Profiling the bundled demo for 3 s: ./pmubpf -F 999 --top 10 -o $out -- build/tests/demo 3"
./pmubpf -F 999 --top 10 -o "$out" -- build/tests/demo 3
echo
echo "Profile written to $out"
echo "Look at it with:  go tool pprof -top $out   (or: go tool pprof -http=:8080 $out)"
