/* The memory access patterns a transpose is made of, alone, against memcpy, on this machine
 * (issue 36: what the transposes' one-thread targets are measured against).
 *
 *   benches/peers/access_patterns.sh          (compiles this with gcc -O2 and runs it)
 *
 * 64 MiB as 4096 rows of 16 KiB (an f32[4096,4096] transpose's source or destination), 4 KiB
 * pages (malloc'd, as Vec<u8> and numpy arrays are). Each pattern touches every line once; each
 * row of the output is the median over ROUNDS rounds (default 7) of the milliseconds per 64 MiB,
 * with the min and max. The patterns:
 *   memcpy            glibc's memcpy of 64 MiB (reads 64 MiB, writes 64 MiB; non-temporal
 *                     stores at this size)
 *   read seq          every line in address order (loads only)
 *   read R rows xK    R rows at a time, K consecutive lines of each before the next row, then the
 *                     next K lines of the same R rows...: a transpose's source with R concurrent
 *                     runs (R = 16: an f32 micro-tile's runs; 64: a u8 micro-tile's or four f32
 *                     tiles'; 512: a band of 2 KiB of f32); "pf D" asks for the line D lines
 *                     ahead in this order (prefetcht0)
 *   write seq nt      every line in address order, non-temporal stores (movntdq)
 *   write R rows xK   the same order as the reads, non-temporal stores: a transpose's
 *                     destination with R rows written at a time
 * Only SSE2 (the x86-64 baseline), like the crate's kernels. */
#include <emmintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"

#define ROWB 16384
#define ROWS 4096
#define TOTAL ((size_t)ROWB * ROWS)
#define LINES (TOTAL / 64)

static unsigned *order;
static volatile int sink;

/* Line indices in the order "R rows at a time, K lines of each". */
static void make_order(int rows, int k) {
  size_t n = 0;
  for (int b = 0; b < ROWS; b += rows)
    for (int c = 0; c < ROWB / 64; c += k)
      for (int r = b; r < b + rows; r++)
        for (int q = 0; q < k; q++) order[n++] = (unsigned)((size_t)r * (ROWB / 64) + c + q);
}

static double reads(const char *buf, int ahead) {
  __m128i acc = _mm_setzero_si128();
  double t = now();
  for (size_t i = 0; i < LINES; i++) {
    if (ahead && i + ahead < LINES) _mm_prefetch(buf + (size_t)order[i + ahead] * 64, _MM_HINT_T0);
    const __m128i *p = (const __m128i *)(buf + (size_t)order[i] * 64);
    acc = _mm_xor_si128(acc, _mm_xor_si128(_mm_xor_si128(_mm_load_si128(p), _mm_load_si128(p + 1)),
                                           _mm_xor_si128(_mm_load_si128(p + 2), _mm_load_si128(p + 3))));
  }
  t = now() - t;
  sink = _mm_cvtsi128_si32(acc);
  return t;
}

static double writes(char *buf) {
  __m128i v = _mm_set1_epi32(7);
  double t = now();
  for (size_t i = 0; i < LINES; i++) {
    __m128i *p = (__m128i *)(buf + (size_t)order[i] * 64);
    _mm_stream_si128(p, v);
    _mm_stream_si128(p + 1, v);
    _mm_stream_si128(p + 2, v);
    _mm_stream_si128(p + 3, v);
  }
  _mm_sfence();
  return now() - t;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void report(const char *name, double *t, int rounds) {
  qsort(t, rounds, sizeof *t, cmp);
  printf("%-28s %7.2f ms  [%.2f-%.2f]\n", name, t[rounds / 2] * 1e3, t[0] * 1e3, t[rounds - 1] * 1e3);
}

int main(void) {
  const char *env = getenv("ROUNDS");
  int rounds = env ? atoi(env) : 7;
  if (rounds < 1 || rounds > 99) rounds = 7;
  /* malloc's buffers (16 bytes past a line), moved up to their first line: the patterns are of
   * whole lines, as the kernels' streamed lines are. */
  char *src = (char *)malloc(TOTAL + 64), *dst = (char *)malloc(TOTAL + 64);
  order = (unsigned *)malloc(LINES * sizeof *order);
  if (!src || !dst || !order) return 1;
  src = (char *)(((size_t)src + 63) & ~(size_t)63);
  dst = (char *)(((size_t)dst + 63) & ~(size_t)63);
  memset(src, 1, TOTAL);
  memset(dst, 2, TOTAL);
  struct { const char *name; int rows, k, ahead, write; } cases[] = {
      {"read seq", ROWS, ROWB / 64, 0, 0},      {"read 16 rows x1", 16, 1, 0, 0},
      {"read 64 rows x1", 64, 1, 0, 0},         {"read 64 rows x1 pf 64", 64, 1, 64, 0},
      {"read 64 rows x4 pf 64", 64, 4, 64, 0},  {"read 512 rows x1", 512, 1, 0, 0},
      {"read 512 rows x1 pf 64", 512, 1, 64, 0}, {"read 512 rows x32", 512, 32, 0, 0},
      {"write seq nt", ROWS, ROWB / 64, 0, 1},  {"write 16 rows x1 nt", 16, 1, 0, 1},
      {"write 32 rows x1 nt", 32, 1, 0, 1},     {"write 64 rows x1 nt", 64, 1, 0, 1},
      {"write 512 rows x1 nt", 512, 1, 0, 1},   {"write 512 rows x4 nt", 512, 4, 0, 1},
      {"write 4096 rows x1 nt", 4096, 1, 0, 1},
  };
  double t[99];
  for (int r = 0; r < rounds; r++) {
    double s = now();
    memcpy(dst, src, TOTAL);
    t[r] = now() - s;
  }
  report("memcpy", t, rounds);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    make_order(cases[c].rows, cases[c].k);
    for (int r = 0; r < rounds; r++) t[r] = cases[c].write ? writes(dst) : reads(src, cases[c].ahead);
    report(cases[c].name, t, rounds);
  }
  return 0;
}
