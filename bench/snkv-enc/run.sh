#!/bin/sh
# SNKV's benchmark workload on encrypted stores: SNKV's store opened with
# kvstore_open_encrypted (driver.c, our own program against SNKV's public
# header) against kvstore's BenchmarkSNKVWorkload with a password
# (SNKV_BENCH_PASSWORD), alternated C, snkv, C, snkv, ... by
# scripts/snkv-vs-c.sh, which prints the table of medians and ratios.
# SNKV's sources are compiled here, never copied.
#
#   bench/snkv-enc/run.sh SNKV_CHECKOUT
#   ROUNDS=3 CORES=all bench/snkv-enc/run.sh /tmp/snkvc
#   METRIC=cpu ROUNDS=3 CORES=all bench/snkv-enc/run.sh /tmp/snkvc
#
# SNKV_CHECKOUT is a checkout of SNKV (v0.8.0 for the figures in
# docs/encryption.md); its library is built, release flags, in $OUT/lib
# (default $TMPDIR/snkv-enc), leaving the checkout as it is. METRIC=cpu
# compares operations per second of CPU time: scripts/snkv-vs-c.sh then
# sets SNKV_CPU=1, which the driver reads as "time with the process's CPU
# clock".
set -eu
snkv=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT:-${TMPDIR:-/tmp}/snkv-enc}
lib="$out/lib"
"$here/../snkv-lib.sh" "$snkv" "$lib"
gcc -O2 -o "$out/snkv-enc-driver" "$here/driver.c" -I"$snkv/include" "$lib/libsnkv.a" -lpthread -lm
SNKV_BENCH_PASSWORD=${SNKV_BENCH_PASSWORD:-snkv-bench}
export SNKV_BENCH_PASSWORD
SNKV_C="$out/snkv-enc-driver" OUT="$out" exec "$root/scripts/snkv-vs-c.sh"
