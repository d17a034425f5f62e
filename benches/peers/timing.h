/* What the C programs of benches/peers share: a monotonic clock in seconds, and qsort's
 * comparison of doubles (for medians of rounds). Included by each program; compile them from
 * any directory, as their headers say: the include is relative to this folder. */
#ifndef XLA_SHAPE_PEERS_TIMING_H
#define XLA_SHAPE_PEERS_TIMING_H

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

#endif
