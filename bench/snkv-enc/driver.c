/*
 * SNKV's benchmark workload on SNKV's encrypted store: the phases of
 * SNKV's tests/test_benchmark (same keys, values, counts and transaction
 * shapes, in the same order on one store, then the bulk insert on a fresh
 * one), on stores opened with kvstore_open_encrypted. Written for snkv
 * against SNKV's public header include/kvstore.h; nothing of SNKV's
 * benchmark program is copied. Each phase prints one line,
 *
 *   Sequential writes: 123,456 ops/sec (...)
 *
 * in the words SNKV's program uses, so scripts/snkv-vs-c.sh reads it as it
 * reads that program. SNKV_CPU=1 in the environment times each phase with
 * the process's CPU clock (every thread) instead of the wall clock, as
 * kvstore's BenchmarkSNKVWorkload reports both. SNKV_BENCH_RECORDS sets the
 * record count (default 1,000,000) and SNKV_BENCH_PASSWORD the password
 * (default "snkv-bench").
 *
 * Build and run: bench/snkv-enc/run.sh SNKV_CHECKOUT.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kvstore.h"
#include "../phase.h"

enum { batch = 1000, reads = 50000, updates = 10000, deletes = 5000, mixed = 20000 };

static KVStore *open_store(const char *path, const char *pw) {
	KVStore *kv = NULL;
	remove(path);
	char side[512];
	snprintf(side, sizeof side, "%s-wal", path);
	remove(side);
	snprintf(side, sizeof side, "%s-shm", path);
	remove(side);
	check(kvstore_open_encrypted(path, pw, (int)strlen(pw), &kv, NULL), "kvstore_open_encrypted");
	if (!kvstore_is_encrypted(kv)) {
		fprintf(stderr, "%s: not encrypted\n", path);
		exit(1);
	}
	return kv;
}

int main(void) {
	const char *e = getenv("SNKV_BENCH_RECORDS");
	long n = e && atol(e) > 0 ? atol(e) : 1000000;
	const char *pw = getenv("SNKV_BENCH_PASSWORD");
	if (!pw || !*pw) pw = "snkv-bench";
	phase_init();
	srand((unsigned)time(NULL));

	char key[64], val[128];
	void *got;
	int glen, exists;
	long i, count;
	double t;
	KVStore *kv = open_store("benchmark_kv.db", pw);

	t = now();
	for (i = 0; i < n; i++) {
		if (i % batch == 0) {
			if (i > 0) check(kvstore_commit(kv), "commit");
			check(kvstore_begin(kv, 1), "begin");
		}
		snprintf(key, sizeof key, "key_%08ld", i);
		snprintf(val, sizeof val, "value_%08ld_with_some_additional_data_to_make_it_realistic", i);
		check(kvstore_put(kv, key, (int)strlen(key), val, (int)strlen(val)), "put");
	}
	check(kvstore_commit(kv), "commit");
	report("Sequential writes", t, n);

	t = now();
	for (i = 0; i < reads; i++) {
		snprintf(key, sizeof key, "key_%08ld", rand() % n);
		if (kvstore_get(kv, key, (int)strlen(key), &got, &glen) == KVSTORE_OK) snkv_free(got);
	}
	report("Random reads", t, reads);

	KVIterator *it = NULL;
	t = now();
	check(kvstore_iterator_create(kv, &it), "iterator");
	count = 0;
	for (kvstore_iterator_first(it); !kvstore_iterator_eof(it); kvstore_iterator_next(it)) {
		void *k, *v;
		int kl, vl;
		kvstore_iterator_key(it, &k, &kl);
		kvstore_iterator_value(it, &v, &vl);
		count++;
	}
	kvstore_iterator_close(it);
	report("Sequential scan", t, count);
	if (count != n) {
		fprintf(stderr, "scan saw %ld records, want %ld\n", count, n);
		return 1;
	}

	check(kvstore_begin(kv, 1), "begin");
	t = now();
	for (i = 0; i < updates; i++) {
		long k = rand() % n;
		snprintf(key, sizeof key, "key_%08ld", k);
		snprintf(val, sizeof val, "updated_value_%08ld", k);
		check(kvstore_put(kv, key, (int)strlen(key), val, (int)strlen(val)), "put");
	}
	check(kvstore_commit(kv), "commit");
	report("Random updates", t, updates);

	check(kvstore_begin(kv, 1), "begin");
	t = now();
	for (i = 0; i < deletes; i++) {
		snprintf(key, sizeof key, "key_%08ld", rand() % n);
		kvstore_delete(kv, key, (int)strlen(key));
	}
	check(kvstore_commit(kv), "commit");
	report("Random deletes", t, deletes);

	t = now();
	for (i = 0; i < reads; i++) {
		snprintf(key, sizeof key, "key_%08ld", rand() % n);
		kvstore_exists(kv, key, (int)strlen(key), &exists);
	}
	report("Exists checks", t, reads);

	check(kvstore_begin(kv, 1), "begin");
	t = now();
	for (i = 0; i < mixed; i++) {
		long k = rand() % n;
		int op = rand() % 100;
		snprintf(key, sizeof key, "key_%08ld", k);
		if (op < 70) {
			if (kvstore_get(kv, key, (int)strlen(key), &got, &glen) == KVSTORE_OK) snkv_free(got);
		} else if (op < 90) {
			snprintf(val, sizeof val, "mixed_value_%08ld", k);
			check(kvstore_put(kv, key, (int)strlen(key), val, (int)strlen(val)), "put");
		} else {
			kvstore_delete(kv, key, (int)strlen(key));
		}
	}
	check(kvstore_commit(kv), "commit");
	report("Mixed workload", t, mixed);
	check(kvstore_close(kv), "close");

	kv = open_store("benchmark_bulk.db", pw);
	check(kvstore_begin(kv, 1), "begin");
	t = now();
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof key, "bulk_key_%08ld", i);
		snprintf(val, sizeof val, "bulk_value_%08ld", i);
		check(kvstore_put(kv, key, (int)strlen(key), val, (int)strlen(val)), "put");
	}
	check(kvstore_commit(kv), "commit");
	report("Bulk insert", t, n);
	check(kvstore_close(kv), "close");
	return 0;
}
