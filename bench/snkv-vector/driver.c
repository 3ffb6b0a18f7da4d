/* Measures SNKV's kvstore_vec on the data sets snkv's vector package is
 * measured on (written by `go test -run TestDumpSets ./vector/`).
 * usage: driver DIR NAME DIM EF [N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "kvstore_vec.h"

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static double cpu(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec / 1e9; }

static void *slurp(const char *dir, const char *name, const char *ext, long *len) {
	char p[1024]; snprintf(p, sizeof p, "%s/%s.%s", dir, name, ext);
	FILE *f = fopen(p, "rb"); if (!f) { perror(p); exit(1); }
	fseek(f, 0, SEEK_END); *len = ftell(f); fseek(f, 0, SEEK_SET);
	void *b = malloc(*len); if (fread(b, 1, *len, f) != (size_t)*len) { perror("read"); exit(1); }
	fclose(f); return b;
}

static long rss_kib(void) {
	FILE *f = fopen("/proc/self/status", "r"); char line[256]; long kb = 0;
	while (f && fgets(line, sizeof line, f)) if (!strncmp(line, "VmRSS:", 6)) kb = atol(line + 6);
	if (f) fclose(f); return kb;
}

static int cmpd(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return x < y ? -1 : x > y; }

int main(int argc, char **argv) {
	if (argc < 5) { fprintf(stderr, "usage: driver DIR NAME DIM EF [N]\n"); return 2; }
	const char *dir = argv[1], *name = argv[2];
	int dim = atoi(argv[3]), ef = atoi(argv[4]);
	long nb, nq, nt;
	float *base = slurp(dir, name, "base", &nb), *qs = slurp(dir, name, "queries", &nq);
	int *truth = slurp(dir, name, "truth", &nt);
	int n = nb / (4 * dim), q = nq / (4 * dim);
	if (argc > 5 && atoi(argv[5]) < n) n = atoi(argv[5]);
	char path[1024]; snprintf(path, sizeof path, "%s/snkv-%s.db", dir, name);
	unlink(path);
	char side[1100]; snprintf(side, sizeof side, "%s.usearch", path); unlink(side);
	KVVecStore *vs = NULL;
	long rss0 = rss_kib();
	if (kvstore_vec_open(path, dim, KVVEC_SPACE_COSINE, 16, 128, ef, KVVEC_DTYPE_F32, NULL, 0, &vs)) { fprintf(stderr, "open failed\n"); return 1; }
	KVVecItem *items = calloc(1000, sizeof *items);
	char (*keys)[16] = calloc(1000, 16);
	double t0 = now(), c0 = cpu();
	for (int lo = 0; lo < n; lo += 1000) {
		int m = n - lo < 1000 ? n - lo : 1000;
		for (int i = 0; i < m; i++) {
			int k = snprintf(keys[i], 16, "k%d", lo + i);
			items[i].pKey = keys[i]; items[i].nKey = k;
			items[i].pVal = ""; items[i].nVal = 0;
			items[i].pVec = base + (long)(lo + i) * dim;
		}
		if (kvstore_vec_put_batch(vs, items, m, 0)) { fprintf(stderr, "put_batch failed\n"); return 1; }
	}
	double el = now() - t0, ec = cpu() - c0;
	printf("%s: bulk insert, 1,000 per tx: %.0f vectors/s (%.0f per CPU-second)\n", name, n / el, n / ec);
	double *lat = malloc(q * sizeof *lat), *clat = malloc(q * sizeof *clat);
	double hits = 0;
	for (int i = 0; i < q; i++) {
		KVVecKeyResult *res = NULL; int nr = 0;
		double s = now(), sc = cpu();
		kvstore_vec_search_keys(vs, qs + (long)i * dim, 10, &res, &nr);
		lat[i] = (now() - s) * 1e3; clat[i] = (cpu() - sc) * 1e3;
		for (int j = 0; j < nr; j++) {
			int id = atoi((char *)res[j].pKey + 1);
			for (int t = 0; t < 10; t++) if (truth[i * 10 + t] == id) { hits++; break; }
		}
		kvstore_vec_free_key_results(res, nr);
	}
	qsort(lat, q, sizeof *lat, cmpd); qsort(clat, q, sizeof *clat, cmpd);
	printf("%s: recall@10 %.4f at ef %d, search p50 %.3f ms (CPU %.3f ms)\n", name, hits / (10.0 * q), ef, lat[q / 2], clat[q / 2]);
	/* single puts */
	t0 = now();
	for (int i = 0; i < 300; i++) {
		char k[32]; int kl = snprintf(k, sizeof k, "single-%d", i);
		kvstore_vec_put(vs, k, kl, "", 0, base + (long)(i % n) * dim, 0, NULL, 0);
	}
	printf("%s: single put per tx: %.0f puts/s\n", name, 300 / (now() - t0));
	printf("%s: resident %.2f KiB a vector\n", name, (rss_kib() - rss0) / (double)n);
	t0 = now();
	kvstore_vec_close(vs);
	printf("%s: close (writes the sidecar) %.3f s\n", name, now() - t0);
	t0 = now();
	if (kvstore_vec_open(path, dim, KVVEC_SPACE_COSINE, 16, 128, ef, KVVEC_DTYPE_F32, NULL, 0, &vs)) return 1;
	printf("%s: open with the sidecar %.3f s\n", name, now() - t0);
	kvstore_vec_close(vs);
	unlink(side);
	t0 = now();
	if (kvstore_vec_open(path, dim, KVVEC_SPACE_COSINE, 16, 128, ef, KVVEC_DTYPE_F32, NULL, 0, &vs)) return 1;
	printf("%s: open without the sidecar (rebuild) %.3f s\n", name, now() - t0);
	kvstore_vec_close(vs);
	FILE *f = fopen(path, "rb"); fseek(f, 0, SEEK_END); long fsz = ftell(f); fclose(f);
	f = fopen(side, "rb"); long ssz = 0; if (f) { fseek(f, 0, SEEK_END); ssz = ftell(f); fclose(f); }
	printf("%s: file %.2f KiB a vector, sidecar %.2f KiB\n", name, fsz / 1024.0 / n, ssz / 1024.0 / n);
	return 0;
}
