/* Source rows read in step, against memcpy, on this machine (issue 36; docs/relayout.md, "A
 * band's source rows in step"; `plan::WIDE_BAND_ROWS`):
 *
 *   gcc -O2 -o /tmp/rows_in_step benches/peers/rows_in_step.c && /tmp/rows_in_step [STRIDE]
 *
 * A transpose's band reads one cache line of each of its source rows per tile-row, all its rows
 * in step. This program reads 64 MiB of rows STRIDE bytes apart (default 16384: f32[4096,4096]'s
 * and u64[2048,4096]'s source rows) K rows at a time, one line of each row per step, for K from
 * 4 to 128 (loads alone, xor-folded into a register; page-aligned buffers on 4 KiB pages), and
 * prints memcpy's time of the same 64 MiB and each K's, medians of 7 rounds in milliseconds (a
 * last group of rows short of K is left out: K = 12 and 24 read 99.9 % and 99.6 % of it). If
 * the time jumps past some K, the hardware follows at most that many rows in step, and a band
 * should read fewer. Only SSE2 (the x86-64 baseline), like the crate's kernels. */
#include <emmintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "timing.h"

#define TOTAL ((size_t)64 << 20)
#define ROUNDS 7

static volatile long long folded;

/* Rows of `stride` bytes, K at a time; each step reads the next line of each of the K rows. */
static void in_step(const char *s, size_t stride, size_t k) {
  size_t rows = TOTAL / stride;
  __m128i acc = _mm_setzero_si128();
  for (size_t r0 = 0; r0 + k <= rows; r0 += k)
    for (size_t c = 0; c < stride; c += 64)
      for (size_t r = 0; r < k; r++) {
        const __m128i *p = (const __m128i *)(s + (r0 + r) * stride + c);
        __m128i x = _mm_xor_si128(_mm_loadu_si128(p), _mm_loadu_si128(p + 1));
        acc = _mm_xor_si128(acc, _mm_xor_si128(x, _mm_xor_si128(_mm_loadu_si128(p + 2), _mm_loadu_si128(p + 3))));
      }
  folded = _mm_cvtsi128_si64(acc);
}

int main(int argc, char **argv) {
  size_t stride = argc > 1 ? strtoul(argv[1], NULL, 0) : 16384;
  if (stride < 64 || stride % 64 != 0 || stride > TOTAL / 128) {
    fprintf(stderr, "STRIDE must be a multiple of 64 from 64 to %zu\n", TOTAL / 128);
    return 2;
  }
  const size_t ks[] = {4, 8, 12, 16, 24, 32, 64, 128};
  enum { KS = sizeof ks / sizeof ks[0] };
  char *s = aligned_alloc(4096, TOTAL), *d = aligned_alloc(4096, TOTAL);
  if (!s || !d) return 1;
  madvise(s, TOTAL, MADV_NOHUGEPAGE);
  madvise(d, TOTAL, MADV_NOHUGEPAGE);
  memset(s, 1, TOTAL);
  memset(d, 2, TOTAL);
  double t[KS + 1][ROUNDS];
  for (int r = 0; r < ROUNDS; r++) {
    double t0 = now();
    memcpy(d, s, TOTAL);
    t[0][r] = now() - t0;
    for (size_t k = 0; k < KS; k++) {
      t0 = now();
      in_step(s, stride, ks[k]);
      t[k + 1][r] = now() - t0;
    }
  }
  for (size_t k = 0; k <= KS; k++) qsort(t[k], ROUNDS, sizeof(double), cmpd);
  printf("rows %zu bytes apart, ms per 64 MiB, medians of %d rounds [min-max]\n", stride, ROUNDS);
  printf("memcpy            %6.2f [%.2f-%.2f]\n", t[0][ROUNDS / 2] * 1e3, t[0][0] * 1e3, t[0][ROUNDS - 1] * 1e3);
  for (size_t k = 0; k < KS; k++)
    printf("%3zu rows in step  %6.2f [%.2f-%.2f]\n", ks[k], t[k + 1][ROUNDS / 2] * 1e3, t[k + 1][0] * 1e3,
           t[k + 1][ROUNDS - 1] * 1e3);
  free(s);
  free(d);
  return 0;
}
