#!/bin/sh
# Issue #34's TTL benchmark: SNKV's store driven through its TTL calls
# (driver.c, our own program against SNKV's public header) against
# kvstore's BenchmarkTTLWorkload, alternated C, snkv, C, snkv, ... by
# scripts/snkv-vs-c.sh, which prints the table of medians and ratios, on
# every core and then both pinned to one core. SNKV's sources are compiled
# here, never copied.
#
#   bench/ttl/run.sh SNKV_CHECKOUT
#   ROUNDS=3 CORES=all METRIC=cpu bench/ttl/run.sh /tmp/snkvc
#
# SNKV_CHECKOUT is a checkout of SNKV (v0.8.0 for the figures in
# docs/ttl.md); its library is built in $OUT/lib (default $TMPDIR/snkv-ttl).
# METRIC=cpu compares operations per second of CPU time.
set -eu
snkv=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT:-${TMPDIR:-/tmp}/snkv-ttl}
"$here/../snkv-lib.sh" "$snkv" "$out/lib"
gcc -O2 -Wall -o "$out/snkv-ttl-driver" "$here/driver.c" -I"$snkv/include" "$out/lib/libsnkv.a" -lpthread -lm
BENCH=BenchmarkTTLWorkload \
	OPS='put_ttl get get_ttl ttl_remaining refresh purge purge_tx purge_none mixed' \
	SNKV_C="$out/snkv-ttl-driver" OUT="$out" exec "$root/scripts/snkv-vs-c.sh"
