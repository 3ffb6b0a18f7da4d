#!/bin/sh
# Measures SNKV's vector layer (kvstore_vec) on the data sets snkv's vector
# package is measured on. docs/benchmarks.md, "Vector search", gives the
# steps; SNKV's own sources are never copied here.
#
#   bench/snkv-vector/run.sh SNKV_CHECKOUT [DATA_DIR]
#
# SNKV_CHECKOUT is a checkout of SNKV (its Makefile's `make vector` builds
# libsnkv_vec.a there); DATA_DIR (default /tmp/vecdata) receives the data
# sets, written by `go test -run TestDumpSets ./vector/`.
set -eu
snkv=$1
data=${2:-/tmp/vecdata}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$data"
if [ ! -f "$data/hard.truth" ]; then
	(cd "$root" && VECTOR_DUMP="$data" go test -run '^TestDumpSets$' -timeout 60m ./vector/)
fi
(cd "$snkv" && make BUILD=release vector)
gcc -O2 -o "$data/snkv-vec-driver" "$here/driver.c" -I"$snkv/include" "$snkv/libsnkv_vec.a" -lstdc++ -lpthread -lm
"$data/snkv-vec-driver" "$data" clustered 384 64
"$data/snkv-vec-driver" "$data" hard 384 128
