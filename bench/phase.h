/*
 * What the C drivers under bench/ share: a phase's clock and its report
 * line, "  name: N ops/sec (...)", the form scripts/snkv-vs-c.sh reads.
 * SNKV_CPU=1 in the environment (phase_init) times phases with the
 * process's CPU clock instead of the wall clock.
 */
#ifndef SNKV_BENCH_PHASE_H
#define SNKV_BENCH_PHASE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kvstore.h"

static int cpu_clock;

static void phase_init(void) {
	const char *e = getenv("SNKV_CPU");
	cpu_clock = e && *e && strcmp(e, "0") != 0;
}

static double now(void) {
	struct timespec t;
	clock_gettime(cpu_clock ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* report prints the phase name's rate: ops operations in the seconds s. */
static void report_s(const char *name, double s, long ops) {
	printf("  %-30s: %.0f ops/sec (%.3f seconds for %ld ops)\n", name, ops / s, s, ops);
	fflush(stdout);
}

/* report prints the rate of the phase name begun at t0 (now()). */
static void report(const char *name, double t0, long ops) {
	report_s(name, now() - t0, ops);
}

static void check(int rc, const char *what) {
	if (rc != KVSTORE_OK) {
		fprintf(stderr, "%s: rc %d\n", what, rc);
		exit(1);
	}
}

#endif
