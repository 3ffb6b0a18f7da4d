#!/bin/sh
# SNKV's own benchmark: the C program (tests/test_benchmark of the C store,
# built by hand as docs/benchmarks.md says) against BenchmarkSNKVWorkload,
# alternated C, snkv, C, snkv, ... for ROUNDS rounds, first on every core,
# then with both pinned to one core (taskset -c 0), and the table of
# medians and ratios to C for each.
#
#   SNKV_C=/tmp/snkvc/tests/test_benchmark scripts/snkv-vs-c.sh
#   ROUNDS=3 CORES='all' SNKV_C=... scripts/snkv-vs-c.sh   # 2 cores only
#   BEFORE=/tmp/old.test SNKV_C=... scripts/snkv-vs-c.sh   # a third side: an older test binary
#   METRIC=cpu SNKV_C=/tmp/snkvc/tests/test_benchmark_cpu scripts/snkv-vs-c.sh
#   BENCH=BenchmarkTTLWorkload OPS='put_ttl get ...' SNKV_C=... scripts/snkv-vs-c.sh
#
# METRIC=cpu compares operations per second of CPU time instead of the wall
# clock (the Go side's -ops/cpu-s metrics; the C side must then be built to
# time with CLOCK_PROCESS_CPUTIME_ID, see docs/benchmarks.md; our own
# drivers in bench/ read SNKV_CPU, which is set to 1 for METRIC=cpu and 0
# otherwise). BENCH names the Go benchmark (default BenchmarkSNKVWorkload)
# and OPS its phases, the metric names it reports; a C line "  op: N
# ops/sec" names its phase in those words (bench/ttl/driver.c), SNKV's own
# program in its words, mapped here. Raw figures
# go to $OUT/raw.txt (default $TMPDIR/snkv-vs-c).
set -eu

cd "$(dirname "$0")/.."
: "${SNKV_C:?set SNKV_C to the C benchmark program (docs/benchmarks.md)}"
rounds=${ROUNDS:-5}
cores=${CORES:-all one}
metric=${METRIC:-wall}
bench=${BENCH:-BenchmarkSNKVWorkload}
ops=${OPS:-seqwrite randread scan update delete exists mixed bulk}
cpu=0
[ "$metric" = cpu ] && cpu=1
out=${OUT:-${TMPDIR:-/tmp}/snkv-vs-c}
mkdir -p "$out"
go test -c -o "$out/kvstore.test" ./kvstore
raw="$out/raw.txt"
: >"$raw"
suffix=ops/s
[ "$metric" = cpu ] && suffix=ops/cpu-s

# c_side CORE ROUND: one run of the C program in an empty directory.
c_side() {
	d=$(mktemp -d "$out/c.XXXXXX")
	(cd "$d" && SNKV_CPU=$cpu $pin "$SNKV_C") | sed 's/\x1b\[[0-9;]*m//g' | awk -v core="$1" -v r="$2" '
		/ops\/sec/ {
			split($0, a, ":"); name = a[1]; gsub(/^ +| +$/, "", name)
			v = a[2]; sub(/ops\/sec.*/, "", v); gsub(/[ ,]/, "", v)
			op = (name == "Sequential writes") ? "seqwrite" : (name == "Random reads") ? "randread" : \
			     (name == "Sequential scan") ? "scan" : (name == "Random updates") ? "update" : \
			     (name == "Random deletes") ? "delete" : (name == "Exists checks") ? "exists" : \
			     (name == "Mixed workload") ? "mixed" : (name == "Bulk insert") ? "bulk" : \
			     (name ~ /^[a-z_]+$/) ? name : ""
			if (op != "") print core, r, "C", op, v
		}' >>"$raw"
	rm -rf "$d"
}

# go_side SIDE BINARY CORE ROUND: one run of the Go benchmark.
go_side() {
	$pin "$2" -test.run '^$' -test.bench "^$bench\$" -test.benchtime 1x \
		-test.timeout 30m | awk -v side="$1" -v core="$3" -v r="$4" -v suf="-$suffix" '
		/^Benchmark/ {
			for (i = 3; i < NF; i += 2) {
				u = $(i + 1)
				if (substr(u, length(u) - length(suf) + 1) == suf) {
					print core, r, side, substr(u, 1, length(u) - length(suf)), $i
				}
			}
		}' >>"$raw"
}

for core in $cores; do
	pin=
	[ "$core" = one ] && pin="taskset -c 0"
	i=1
	while [ "$i" -le "$rounds" ]; do
		echo "$core: round $i of $rounds (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
		c_side "$core" "$i"
		go_side snkv "$out/kvstore.test" "$core" "$i"
		[ -n "${BEFORE:-}" ] && go_side before "$BEFORE" "$core" "$i"
		i=$((i + 1))
	done
done

# The table: per core setting and operation, the median of each side, the
# median of the per-round ratios to C and their range.
awk -v metric="$metric" -v corelist="$cores" -v oplist="$ops" '
	function median(s,   n, a, i, j, t) {
		n = split(s, a, " ")
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{ v[$1, $3, $4] = v[$1, $3, $4] " " $5; x[$1, $2, $3, $4] = $5; sides[$3] = 1; if (!($2 in rounds)) { rounds[$2] = 1; nr++ } }
	END {
		nops = split(oplist, ops, " ")
		nc = split(corelist, cs, " ")
		hasb = ("before" in sides)
		for (ci = 1; ci <= nc; ci++) {
			core = cs[ci]
			printf "\n%s, %s clock, %d rounds; ratios are medians of the per-round ratios\n", core == "one" ? "one core (taskset -c 0)" : "all cores", metric, nr
			printf "%-10s %12s %12s %8s %14s", "op", "C", "snkv", "snkv/C", "per round"
			if (hasb) printf " %12s %9s", "before", "before/C"
			printf "\n"
			for (k = 1; k <= nops; k++) {
				op = ops[k]; lo = 1e9; hi = 0; qs = ""; qb = ""
				for (r in rounds) if (x[core, r, "C", op] > 0) {
					q = x[core, r, "snkv", op] / x[core, r, "C", op]; qs = qs " " q
					if (q < lo) lo = q; if (q > hi) hi = q
					if (hasb) qb = qb " " x[core, r, "before", op] / x[core, r, "C", op]
				}
				printf "%-10s %12.0f %12.0f %8.2f %6.2f–%-6.2f", op, median(v[core, "C", op]), median(v[core, "snkv", op]), median(qs), lo, hi
				if (hasb) printf " %12.0f %9.2f", median(v[core, "before", op]), median(qb)
				printf "\n"
			}
		}
	}' "$raw"
echo "raw figures: $raw" >&2
