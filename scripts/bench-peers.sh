#!/bin/sh
# Runs bench/peers (snkv beside bbolt, buntdb, badger and database/sql, each engine
# in a process of its own) ROUNDS times (default 3), the engines alternated
# within each round, and prints the median of each figure.
#
#   scripts/bench-peers.sh                 # get, purge, purge1tx, syncfull
#   WORK='get' ROUNDS=5 scripts/bench-peers.sh
#   WORK='bulk ttlbulk ttlget' scripts/bench-peers.sh   # bulk loads, TTLs
#   WORK='scan prefix' scripts/bench-peers.sh           # full and prefix scans
#
# bench/ is a module of its own, so that snkv gains no dependency: building
# it fetches bbolt, buntdb and badger. Raw lines go to $OUT/peers.txt (default
# $TMPDIR/snkv-bench).
set -eu

cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
work=${WORK:-get purge purge1tx syncfull}
out=${OUT:-${TMPDIR:-/tmp}/snkv-bench}
mkdir -p "$out"
(cd bench && go build -o "$out/peers" ./peers)
: >"$out/peers.txt"
i=1
while [ "$i" -le "$rounds" ]; do
	echo "round $i of $rounds" >&2
	for w in $work; do
		case $w in
		get) engines="snkv bbolt buntdb sql" ;;
		bulk) engines="snkv bbolt buntdb badger" ;;
		scan | prefix) engines="snkv bbolt buntdb badger sql" ;;
		ttlbulk | ttlget) engines="snkv buntdb badger" ;;
		*) engines="snkv sql" ;;
		esac
		for e in $engines; do
			"$out/peers" -engine "$e" -work "$w" -dir "$out" | tee -a "$out/peers.txt"
		done
	done
	i=$((i + 1))
done
echo "medians of $rounds rounds:"
awk '{ k = $1 " " $2 " " $3; v[k] = v[k] " " $4; if (!(k in seen)) { seen[k] = 1; order[n++] = k } }
END {
	for (i = 0; i < n; i++) {
		m = split(substr(v[order[i]], 2), a, " ")
		for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++) if (a[y] + 0 < a[x] + 0) { t = a[x]; a[x] = a[y]; a[y] = t }
		printf "%-40s %12.0f\n", order[i], (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
}' "$out/peers.txt"
