/* What the C programs of benches/peers share: a monotonic clock in seconds, qsort's comparison
 * of doubles (for medians of rounds), and the rows of a table of timed kinds against memcpy.
 * Included by each program; compile them from any directory, as their headers say: the include
 * is relative to this folder. */
#ifndef XLA_SHAPE_PEERS_TIMING_H
#define XLA_SHAPE_PEERS_TIMING_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static inline int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* One row per timed kind: `t` holds `kinds` × `rounds` seconds, kind k's rounds at
 * t + k * rounds, kind 0 memcpy's. Each row: `indent`, the name (padded to `width`), the median
 * in milliseconds [min-max], and memcpy's median over it. Kinds whose `skip` entry is nonzero
 * (`skip` may be NULL) are left out. Sorts each kind's rounds in place. */
static inline void print_medians(const char *indent, const char *const *names, int width, double *t, int kinds,
                                 int rounds, const int *skip) {
  double memcpy_ms = 0;
  for (int k = 0; k < kinds; k++) {
    if (skip && skip[k]) continue;
    double *v = t + k * rounds;
    qsort(v, rounds, sizeof(double), cmpd);
    double ms = v[rounds / 2] * 1e3;
    if (k == 0) memcpy_ms = ms;
    printf("%s%-*s %6.2f [%.2f-%.2f]  memcpy / this %.2f\n", indent, width, names[k], ms, v[0] * 1e3,
           v[rounds - 1] * 1e3, memcpy_ms / ms);
  }
}

#endif
