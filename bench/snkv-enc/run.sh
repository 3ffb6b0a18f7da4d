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
# compares operations per second of CPU time: the driver reads SNKV_CPU=1,
# which scripts/snkv-vs-c.sh sets, as "time with the process's CPU clock",
# so set METRIC=cpu whenever it is set, and SNKV_CPU=0 otherwise.
set -eu
snkv=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT:-${TMPDIR:-/tmp}/snkv-enc}
lib="$out/lib"
mkdir -p "$lib"
if [ ! -f "$lib/libsnkv.a" ]; then
	for s in src/kvstore.c src/monocypher/monocypher.c src/btree.c src/btmutex.c \
		src/pager.c src/pcache.c src/pcache1.c src/wal.c src/memjournal.c src/bitvec.c \
		src/os.c src/os_unix.c src/os_win.c src/os_kv.c src/mutex.c src/mutex_noop.c \
		src/mutex_unix.c src/mutex_w32.c src/malloc.c src/status.c src/global.c \
		src/hash.c src/util.c src/printf.c src/random.c src/threads.c src/fault.c src/mem1.c; do
		gcc -O2 -DNDEBUG -I"$snkv/include" -c -o "$lib/$(echo "$s" | tr / _).o" "$snkv/$s"
	done
	ar rcs "$lib/libsnkv.a" "$lib"/*.o
fi
gcc -O2 -o "$out/snkv-enc-driver" "$here/driver.c" -I"$snkv/include" "$lib/libsnkv.a" -lpthread -lm
SNKV_BENCH_PASSWORD=${SNKV_BENCH_PASSWORD:-snkv-bench}
export SNKV_BENCH_PASSWORD
# The C side gets its clock from SNKV_CPU, set to 1 by snkv-vs-c.sh; a
# wall-clock run needs the driver told otherwise, through a wrapper.
if [ "${METRIC:-wall}" = cpu ]; then
	c="$out/snkv-enc-driver"
else
	c="$out/snkv-enc-wall"
	printf '#!/bin/sh\nSNKV_CPU=0 exec "%s"\n' "$out/snkv-enc-driver" >"$c"
	chmod +x "$c"
fi
SNKV_C=$c OUT="$out" exec "$root/scripts/snkv-vs-c.sh"
