#!/bin/sh
# Runs the kvstore benchmarks RUNS times (default 6), one full pass after the
# other so that every snkv/baseline pair is measured in the same conditions,
# and summarises them with benchstat when it is installed
# (go install golang.org/x/perf/cmd/benchstat@latest).
#
#   scripts/bench.sh                       # all benchmarks, 6 passes
#   RUNS=3 BENCH='Read/Scan' scripts/bench.sh
#   SNKV_BENCH_LARGE=1 scripts/bench.sh    # adds the 1M-live-key purge runs
#
# Raw results go to $OUT/raw.txt (default $TMPDIR/snkv-bench, outside the
# repository).
set -eu

cd "$(dirname "$0")/.."
runs=${RUNS:-6}
bench=${BENCH:-.}
out=${OUT:-${TMPDIR:-/tmp}/snkv-bench}
mkdir -p "$out"
go test -c -o "$out/kvstore.test" ./kvstore
: >"$out/raw.txt"
i=1
while [ "$i" -le "$runs" ]; do
	echo "pass $i of $runs" >&2
	"$out/kvstore.test" -test.run '^$' -test.bench "$bench" -test.benchmem -test.count 1 | tee -a "$out/raw.txt"
	i=$((i + 1))
done
if command -v benchstat >/dev/null 2>&1; then
	benchstat "$out/raw.txt"
else
	echo "benchstat not found; raw results are in $out/raw.txt" >&2
fi
