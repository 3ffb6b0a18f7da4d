#!/bin/sh
# Builds SNKV's library from a checkout, release flags, into DIR/libsnkv.a
# (once: an existing library is kept), leaving the checkout as it is.
# SNKV's sources are compiled here, never copied. Used by the run.sh of
# bench/snkv-enc and bench/ttl.
#
#   bench/snkv-lib.sh SNKV_CHECKOUT DIR
set -eu
snkv=$(cd "$1" && pwd)
lib=$2
mkdir -p "$lib"
[ -f "$lib/libsnkv.a" ] && exit 0
for s in src/kvstore.c src/monocypher/monocypher.c src/btree.c src/btmutex.c \
	src/pager.c src/pcache.c src/pcache1.c src/wal.c src/memjournal.c src/bitvec.c \
	src/os.c src/os_unix.c src/os_win.c src/os_kv.c src/mutex.c src/mutex_noop.c \
	src/mutex_unix.c src/mutex_w32.c src/malloc.c src/status.c src/global.c \
	src/hash.c src/util.c src/printf.c src/random.c src/threads.c src/fault.c src/mem1.c; do
	gcc -O2 -DNDEBUG -I"$snkv/include" -c -o "$lib/$(echo "$s" | tr / _).o" "$snkv/$s"
done
ar rcs "$lib/libsnkv.a" "$lib"/*.o
