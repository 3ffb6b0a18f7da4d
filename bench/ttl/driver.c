/*
 * The TTL benchmark of issue #34 on SNKV's store: the TTL calls of SNKV's
 * public header include/kvstore.h (kvstore_put_ttl, kvstore_get_ttl,
 * kvstore_ttl_remaining, kvstore_purge_expired) on one store opened with
 * kvstore_open in WAL mode, in the order of kvstore's BenchmarkTTLWorkload:
 *
 *   put_ttl        1,000,000 keys in transactions of 1,000, expiring in 1 h
 *   get            50,000 random kvstore_get of live TTL keys
 *   get_ttl        50,000 random kvstore_get_ttl
 *   ttl_remaining  50,000 random kvstore_ttl_remaining
 *   refresh        10,000 random kvstore_put_ttl of existing keys, one transaction
 *   purge          200,000 more keys expiring in 1-2 s (written untimed, in
 *                  transactions of 1,000); once they have expired, one timed
 *                  kvstore_purge_expired (one transaction); the 1,000,000 live
 *                  keys survive
 *   purge_none     10,000 kvstore_purge_expired calls with nothing expired
 *   mixed          20,000 random operations in one transaction: 70% get_ttl,
 *                  20% put_ttl, 10% delete
 *
 * Each phase prints one line, "  name: N ops/sec (...)", the form
 * scripts/snkv-vs-c.sh reads. SNKV's purge is one transaction, so its
 * figure is also printed as purge_tx, the reference of kvstore's purge
 * inside one Update. SNKV_CPU=1 times each phase with the process's CPU
 * clock; SNKV_BENCH_RECORDS sets the live key count (default 1,000,000).
 * Written for snkv; nothing of SNKV's programs is copied.
 *
 * Build and run: bench/ttl/run.sh SNKV_CHECKOUT.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kvstore.h"
#include "../phase.h"

enum { batch = 1000, reads = 50000, refreshes = 10000, expiring = 200000, nones = 10000, mixed = 20000 };

static void sleep_ms(long ms) {
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&t, &t) != 0) {
	}
}

/*
 * put_ttl_batches writes the keys prefix00000000 ... of n, with the
 * benchmark's value, in transactions of batch; key i expires at
 * exp + i % spread.
 */
static void put_ttl_batches(KVStore *kv, const char *prefix, long n, int64_t exp, long spread) {
	char key[64], val[128];
	long i;
	for (i = 0; i < n; i++) {
		if (i % batch == 0) {
			if (i > 0) check(kvstore_commit(kv), "commit");
			check(kvstore_begin(kv, 1), "begin");
		}
		snprintf(key, sizeof key, "%s%08ld", prefix, i);
		snprintf(val, sizeof val, "value_%08ld_with_some_additional_data_to_make_it_realistic", i);
		check(kvstore_put_ttl(kv, key, (int)strlen(key), val, (int)strlen(val), exp + i % spread), "put_ttl");
	}
	check(kvstore_commit(kv), "commit");
}

int main(void) {
	const char *e = getenv("SNKV_BENCH_RECORDS");
	long n = e && atol(e) > 0 ? atol(e) : 1000000;
	phase_init();
	srand((unsigned)time(NULL));
	remove("benchmark_ttl.db");
	remove("benchmark_ttl.db-wal");
	remove("benchmark_ttl.db-shm");

	KVStore *kv = NULL;
	check(kvstore_open("benchmark_ttl.db", &kv, KVSTORE_JOURNAL_WAL), "kvstore_open");
	char key[64], val[128];
	void *got;
	int glen;
	int64_t rem;
	long i;
	const int64_t hour = 3600 * 1000;

	double t = now();
	int64_t exp = kvstore_now_ms() + hour;
	put_ttl_batches(kv, "key_", n, exp, 1);
	report("put_ttl", t, n);

	t = now();
	for (i = 0; i < reads; i++) {
		snprintf(key, sizeof key, "key_%08ld", rand() % n);
		check(kvstore_get(kv, key, (int)strlen(key), &got, &glen), "get");
		snkv_free(got);
	}
	report("get", t, reads);

	t = now();
	for (i = 0; i < reads; i++) {
		snprintf(key, sizeof key, "key_%08ld", rand() % n);
		check(kvstore_get_ttl(kv, key, (int)strlen(key), &got, &glen, &rem), "get_ttl");
		snkv_free(got);
	}
	report("get_ttl", t, reads);

	t = now();
	for (i = 0; i < reads; i++) {
		snprintf(key, sizeof key, "key_%08ld", rand() % n);
		check(kvstore_ttl_remaining(kv, key, (int)strlen(key), &rem), "ttl_remaining");
	}
	report("ttl_remaining", t, reads);

	t = now();
	check(kvstore_begin(kv, 1), "begin");
	exp = kvstore_now_ms() + 2 * hour;
	for (i = 0; i < refreshes; i++) {
		long k = rand() % n;
		snprintf(key, sizeof key, "key_%08ld", k);
		snprintf(val, sizeof val, "refreshed_value_%08ld", k);
		check(kvstore_put_ttl(kv, key, (int)strlen(key), val, (int)strlen(val), exp), "put_ttl");
	}
	check(kvstore_commit(kv), "commit");
	report("refresh", t, refreshes);

	int64_t soon = kvstore_now_ms() + 1000;
	put_ttl_batches(kv, "exp_key_", expiring, soon, 1000);
	int64_t wait = soon + 1000 - kvstore_now_ms();
	if (wait > 0) sleep_ms((long)wait + 1);
	int deleted = 0;
	t = now();
	check(kvstore_purge_expired(kv, &deleted), "purge_expired");
	double s = now() - t;
	if (deleted != expiring) {
		fprintf(stderr, "purge removed %d keys, want %d\n", deleted, expiring);
		return 1;
	}
	report_s("purge", s, deleted);
	report_s("purge_tx", s, deleted);

	t = now();
	for (i = 0; i < nones; i++) {
		check(kvstore_purge_expired(kv, &deleted), "purge_expired");
		if (deleted != 0) {
			fprintf(stderr, "purge with nothing expired removed %d keys\n", deleted);
			return 1;
		}
	}
	report("purge_none", t, nones);

	t = now();
	check(kvstore_begin(kv, 1), "begin");
	exp = kvstore_now_ms() + hour;
	for (i = 0; i < mixed; i++) {
		long k = rand() % n;
		int op = rand() % 100;
		snprintf(key, sizeof key, "key_%08ld", k);
		if (op < 70) {
			if (kvstore_get_ttl(kv, key, (int)strlen(key), &got, &glen, &rem) == KVSTORE_OK) snkv_free(got);
		} else if (op < 90) {
			snprintf(val, sizeof val, "mixed_value_%08ld", k);
			check(kvstore_put_ttl(kv, key, (int)strlen(key), val, (int)strlen(val), exp), "put_ttl");
		} else {
			kvstore_delete(kv, key, (int)strlen(key));
		}
	}
	check(kvstore_commit(kv), "commit");
	report("mixed", t, mixed);
	check(kvstore_close(kv), "close");
	return 0;
}
