/* A transpose's destination rows a power of two apart, against the same rows 64 bytes further
 * apart (issue 36: what the row stride of users' arrays costs the transposes on this machine).
 *
 *   benches/peers/transpose_strides.sh        (compiles this with gcc -O2 and runs it)
 *
 * f32[4096,4096] row-major -> column-major with transpose_parts.c's kernel: 64 x 64 tiles, each
 * as 16 x 16 blocks of 4 x 4 SSE2 transposes, the next tile's source asked for ahead
 * (prefetchnta), every destination line written whole with non-temporal stores. The source rows
 * are 16 KiB apart; the destination rows 16 KiB apart, then 16 KiB + 64 bytes (the array padded
 * by one line per row, as a user cannot do to an XLA array, but the measure of what the stride
 * costs). Both on 4 KiB pages (madvise MADV_NOHUGEPAGE) and on 2 MiB pages (MADV_HUGEPAGE, where
 * the kernel grants them: physically contiguous, so a power-of-two virtual stride is one in
 * physical addresses too). Each row: milliseconds per 64 MiB, median [min-max] over ROUNDS
 * rounds (default 7), and memcpy's time (same buffers, same pages) over it:
 *   memcpy         glibc's memcpy of the 64 MiB
 *   transpose      the whole transpose
 *   stores alone   the same non-temporal stores, of a constant, in the same order (no source)
 * If the padded stride runs markedly faster, the power-of-two stride, not the number of bytes
 * moved, is what the transposes lose to. */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define N 4096
#define T 64

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Source rows N floats apart, destination rows `ds` floats apart; `stores_only` writes a
 * constant instead of the transposed source. */
static void transpose(const float *s, float *d, size_t ds, int stores_only) {
  const __m128 one = _mm_set1_ps(1.0f);
  for (int i = 0; i < N; i += T)
    for (int j = 0; j < N; j += T) {
      int ni = i, nj = j + T;
      if (nj >= N) nj = 0, ni = i + T;
      if (!stores_only && ni < N)
        for (int r = 0; r < T; r++)
          for (int c = 0; c < T * 4; c += 64) _mm_prefetch((const char *)(s + (size_t)(ni + r) * N + nj) + c, _MM_HINT_NTA);
      for (int a = 0; a < T; a += 16)
        for (int b = 0; b < T; b += 16) {
          const float *S = s + (size_t)(i + a) * N + j + b;
          float *D = d + (size_t)(j + b) * ds + i + a;
          for (int bj = 0; bj < 4; bj++) {
            __m128 v[4][4];
            for (int bi = 0; bi < 4; bi++) {
              if (stores_only) {
                v[bi][0] = v[bi][1] = v[bi][2] = v[bi][3] = one;
                continue;
              }
              __m128 r0 = _mm_loadu_ps(S + (bi * 4 + 0) * N + bj * 4), r1 = _mm_loadu_ps(S + (bi * 4 + 1) * N + bj * 4);
              __m128 r2 = _mm_loadu_ps(S + (bi * 4 + 2) * N + bj * 4), r3 = _mm_loadu_ps(S + (bi * 4 + 3) * N + bj * 4);
              _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
              v[bi][0] = r0, v[bi][1] = r1, v[bi][2] = r2, v[bi][3] = r3;
            }
            /* Destination row bj*4+k gets its whole line in a row. */
            for (int k = 0; k < 4; k++)
              for (int bi = 0; bi < 4; bi++) _mm_stream_ps(D + (size_t)(bj * 4 + k) * ds + bi * 4, v[bi][k]);
          }
        }
    }
  _mm_sfence();
}

static int run(int huge, size_t pad, int rounds) {
  size_t ds = N + pad, bytes = (size_t)N * N * sizeof(float), dbytes = (size_t)N * ds * sizeof(float);
  size_t align = 2u << 20, sbytes = (bytes + align - 1) / align * align, dsize = (dbytes + align - 1) / align * align;
  float *s = aligned_alloc(align, sbytes), *d = aligned_alloc(align, dsize);
  if (!s || !d) return 1;
  madvise(s, sbytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  madvise(d, dsize, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  for (size_t k = 0; k < (size_t)N * N; k++) s[k] = (float)k;
  memset(d, 0, dbytes);
  transpose(s, d, ds, 0);
  for (size_t i = 0; i < N; i++)
    for (size_t j = 0; j < N; j++)
      if (d[j * ds + i] != s[i * N + j]) {
        fprintf(stderr, "wrong transpose at %zu, %zu\n", i, j);
        return 1;
      }
  double *t = calloc(3 * (size_t)rounds, sizeof(double));
  if (!t) return 1;
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < 3; k++) {
      double t0 = now();
      if (k == 0) memcpy(d, s, bytes);
      else transpose(s, d, ds, k == 2);
      t[k * rounds + r] = now() - t0;
    }
  const char *names[] = {"memcpy", "transpose", "stores alone"};
  printf("%s pages, destination rows %zu bytes apart\n", huge ? "2 MiB" : "4 KiB", ds * sizeof(float));
  double memcpy_ms = 0;
  for (int k = 0; k < 3; k++) {
    double *v = t + k * rounds;
    qsort(v, rounds, sizeof(double), cmpd);
    double med = v[rounds / 2] * 1e3;
    if (k == 0) memcpy_ms = med;
    printf("  %-13s %6.2f [%.2f-%.2f]  memcpy / this %.2f\n", names[k], med, v[0] * 1e3, v[rounds - 1] * 1e3, memcpy_ms / med);
  }
  free(t);
  free(s);
  free(d);
  return 0;
}

int main(void) {
  const char *env = getenv("ROUNDS");
  int rounds = env ? atoi(env) : 7;
  if (rounds < 1 || rounds > 1000) rounds = 7;
  printf("f32[4096,4096] transposed in 64 x 64 tiles, ms per 64 MiB, median [min-max] of %d rounds\n", rounds);
  for (int huge = 0; huge < 2; huge++)
    for (size_t pad = 0; pad <= 16; pad += 16)
      if (run(huge, pad, rounds)) return 1;
  return 0;
}
