/* An f32 transpose taken apart, against memcpy, on this machine (issue 36: why a one-thread
 * transpose of 64 MiB stays near half of memcpy's speed).
 *
 *   benches/peers/transpose_parts.sh          (compiles this with gcc -O2 and runs it)
 *
 * f32[4096,4096] (64 MiB) row-major -> column-major, both buffers on a cache line (aligned_alloc,
 * 4 KiB pages). The transpose walks 64 x 64 tiles (64 source rows of 256 bytes, 64 destination
 * rows of 256 bytes: the shape the crate's kernels and the patterns of access_patterns.c point
 * to), each tile as 16 x 16 blocks of 4 x 4 SSE2 transposes, the next tile's 64 x 4 source lines
 * asked for ahead (prefetchnta), every destination line written whole with non-temporal stores.
 * Each row of the output is the median over ROUNDS rounds (default 7) of the milliseconds per
 * 64 MiB, min and max, and memcpy's time over it:
 *   memcpy               glibc's memcpy of the 64 MiB
 *   transpose            the whole transpose
 *   loads + shuffles     the same loads and 4 x 4 transposes, the results xor-folded into a
 *                        register (no destination traffic; stores into a small buffer would
 *                        wait on the loads whose addresses share their low 12 bits)
 *   loads                the same loads alone (xor-folded into a register)
 *   stores               the same non-temporal stores of a constant (no source traffic)
 *   transpose, AVX2      the whole transpose with 8 x 8 AVX2 blocks, two above each other so that
 *                        each destination line's two 32-byte non-temporal stores follow each
 *                        other (only where the CPU has AVX2): fewer instructions, same traffic
 *   transpose, AVX-512   16 x 16 blocks in AVX-512 registers, each destination line one 64-byte
 *                        non-temporal store (only where the CPU has AVX-512F)
 * If "loads" alone takes most of "transpose", the reads of 64 rows at a time, not the
 * instructions nor the stores, bound the kernel.
 * Then the same blocks on f32[128,256] (128 KiB) in the caches (transpose_small): how fast these
 * instructions go with no wait on memory and no walk around them, beside memcpy between the same
 * caches (compare the crate's RELAYOUT_CASES=cache group, whose t2d moves an array of this
 * size the other way round).
 * Last, by_stride: the whole transpose and its stores alone with the destination rows 16 KiB
 * apart, then one line further apart, on 4 KiB and on 2 MiB pages (issue 36: what users'
 * power-of-two rows cost). If the padded stride runs markedly faster, the stride, not the
 * number of bytes moved, is what the transposes lose to. */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <time.h>

#include "timing.h"

#define N 4096
#define T 64

enum { TRANSPOSE, SHUFFLES, LOADS, STORES };

static float sink[T * T] __attribute__((aligned(64)));
static volatile float folded;

/* One 16 x 16 block: source rows at s (stride N), destination rows at d (stride ds). */
static inline void block16(const float *s, float *d, size_t ds, int mode, float *l1) {
  for (int bj = 0; bj < 4; bj++) {
    __m128 v[4][4];
    __m128 acc = _mm_setzero_ps();
    for (int bi = 0; bi < 4; bi++) {
      if (mode == STORES) {
        __m128 z = _mm_set1_ps(1.0f);
        v[bi][0] = v[bi][1] = v[bi][2] = v[bi][3] = z;
        continue;
      }
      __m128 r0 = _mm_loadu_ps(s + (bi * 4 + 0) * N + bj * 4), r1 = _mm_loadu_ps(s + (bi * 4 + 1) * N + bj * 4);
      __m128 r2 = _mm_loadu_ps(s + (bi * 4 + 2) * N + bj * 4), r3 = _mm_loadu_ps(s + (bi * 4 + 3) * N + bj * 4);
      if (mode == LOADS) {
        acc = _mm_xor_ps(acc, _mm_xor_ps(_mm_xor_ps(r0, r1), _mm_xor_ps(r2, r3)));
        continue;
      }
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      v[bi][0] = r0, v[bi][1] = r1, v[bi][2] = r2, v[bi][3] = r3;
    }
    if (mode == LOADS) {
      _mm_store_ps(l1 + bj * 4, acc);
      continue;
    }
    /* Destination row bj*4+k gets its 4 x 16 bytes (one line) in a row. */
    for (int k = 0; k < 4; k++)
      for (int bi = 0; bi < 4; bi++) {
        if (mode == SHUFFLES)
          acc = _mm_xor_ps(acc, v[bi][k]);
        else
          _mm_stream_ps(d + (bj * 4 + k) * ds + bi * 4, v[bi][k]);
      }
    if (mode == SHUFFLES) _mm_store_ps(l1 + bj * 4, acc);
  }
}

/* Asks for the source lines of the 64 x 64 tile after tile (i, j) in the walk's order. */
static inline void prefetch_next_tile(const float *s, int i, int j) {
  int ni = i, nj = j + T;
  if (nj >= N) nj = 0, ni = i + T;
  if (ni < N)
    for (int r = 0; r < T; r++)
      for (int c = 0; c < T * 4; c += 64) _mm_prefetch((const char *)(s + (size_t)(ni + r) * N + nj) + c, _MM_HINT_NTA);
}

/* Destination rows `ds` floats apart (N but in by_stride). */
static void transpose(const float *s, float *d, size_t ds, int mode) {
  for (int i = 0; i < N; i += T)
    for (int j = 0; j < N; j += T) {
      if (mode != STORES) prefetch_next_tile(s, i, j);
      for (int a = 0; a < T; a += 16)
        for (int b = 0; b < T; b += 16) block16(s + (size_t)(i + a) * N + j + b, d + (size_t)(j + b) * ds + i + a, ds, mode, sink);
    }
  _mm_sfence();
  folded = sink[0];
}

__attribute__((target("avx2"))) static void transpose_avx2(const float *s, float *d) {
  for (int i = 0; i < N; i += T)
    for (int j = 0; j < N; j += T) {
      prefetch_next_tile(s, i, j);
      /* Two 8 x 8 blocks above each other at a time: each destination row gets its whole line
       * (two 32-byte halves) in a row. */
      for (int a = 0; a < T; a += 16)
        for (int b = 0; b < T; b += 8) {
          __m256 o[2][8];
          for (int h = 0; h < 2; h++) {
            const float *p = s + (size_t)(i + a + 8 * h) * N + j + b;
            __m256 r[8], t[8], u[8];
            for (int k = 0; k < 8; k++) r[k] = _mm256_loadu_ps(p + k * N);
            for (int k = 0; k < 4; k++) {
              t[2 * k] = _mm256_unpacklo_ps(r[2 * k], r[2 * k + 1]);
              t[2 * k + 1] = _mm256_unpackhi_ps(r[2 * k], r[2 * k + 1]);
            }
            for (int k = 0; k < 2; k++) {
              u[4 * k + 0] = _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], 0x44);
              u[4 * k + 1] = _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], 0xEE);
              u[4 * k + 2] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0x44);
              u[4 * k + 3] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0xEE);
            }
            for (int k = 0; k < 4; k++) {
              o[h][k] = _mm256_permute2f128_ps(u[k], u[4 + k], 0x20);
              o[h][4 + k] = _mm256_permute2f128_ps(u[k], u[4 + k], 0x31);
            }
          }
          float *q = d + (size_t)(j + b) * N + i + a;
          for (int k = 0; k < 8; k++) {
            _mm256_stream_ps(q + k * N, o[0][k]);
            _mm256_stream_ps(q + k * N + 8, o[1][k]);
          }
        }
    }
  _mm_sfence();
}

/* 16 x 16 blocks in AVX-512 registers (unpacks, then 128-bit lane shuffles), each destination
 * line one 64-byte non-temporal store (only where the CPU has AVX-512F). */
__attribute__((target("avx512f"))) static void transpose_avx512(const float *s, float *d) {
  for (int i = 0; i < N; i += T)
    for (int j = 0; j < N; j += T) {
      prefetch_next_tile(s, i, j);
      for (int a = 0; a < T; a += 16)
        for (int b = 0; b < T; b += 16) {
          const float *p = s + (size_t)(i + a) * N + j + b;
          __m512 r[16], t[16], o[16];
          for (int k = 0; k < 16; k++) r[k] = _mm512_loadu_ps(p + (size_t)k * N);
          for (int k = 0; k < 8; k++) {
            t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
            t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
          }
          for (int k = 0; k < 4; k++) {
            r[4 * k + 0] = _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], 0x44);
            r[4 * k + 1] = _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], 0xEE);
            r[4 * k + 2] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0x44);
            r[4 * k + 3] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0xEE);
          }
          for (int m = 0; m < 4; m++) {
            __m512 a0 = _mm512_shuffle_f32x4(r[m], r[4 + m], 0x44), a1 = _mm512_shuffle_f32x4(r[m], r[4 + m], 0xEE);
            __m512 b0 = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0x44), b1 = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0xEE);
            o[m] = _mm512_shuffle_f32x4(a0, b0, 0x88);
            o[4 + m] = _mm512_shuffle_f32x4(a0, b0, 0xDD);
            o[8 + m] = _mm512_shuffle_f32x4(a1, b1, 0x88);
            o[12 + m] = _mm512_shuffle_f32x4(a1, b1, 0xDD);
          }
          float *q = d + (size_t)(j + b) * N + i + a;
          for (int k = 0; k < 16; k++) _mm512_stream_ps(q + (size_t)k * N, o[k]);
        }
    }
  _mm_sfence();
}

/* In the caches: f32[R,C] (128 KiB, R = 128 rows of C = 256) transposed with the same 4 x 4
 * SSE2 blocks, 16 x 16 at a time, ordinary stores (as the crate stores below its streaming
 * size), source and destination 16 bytes past a line (where malloc and numpy put large
 * buffers). No walk: the loops are all there is. */
#define R 128
#define C 256
static void transpose_small(const float *s, float *d) {
  for (int i = 0; i < R; i += 16)
    for (int j = 0; j < C; j += 16)
      for (int bj = 0; bj < 4; bj++)
        for (int bi = 0; bi < 4; bi++) {
          const float *p = s + (size_t)(i + bi * 4) * C + j + bj * 4;
          __m128 r0 = _mm_loadu_ps(p), r1 = _mm_loadu_ps(p + C), r2 = _mm_loadu_ps(p + 2 * C), r3 = _mm_loadu_ps(p + 3 * C);
          _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
          float *q = d + (size_t)(j + bj * 4) * R + i + bi * 4;
          _mm_storeu_ps(q, r0), _mm_storeu_ps(q + R, r1), _mm_storeu_ps(q + 2 * R, r2), _mm_storeu_ps(q + 3 * R, r3);
        }
}

/* GB/s of output of the small transpose and of memcpy between two 128 KiB buffers, median of
 * `rounds` timings of 2000 runs each. */
static int in_the_caches(int rounds) {
  size_t bytes = (size_t)R * C * sizeof(float);
  char *a = aligned_alloc(64, bytes + 64), *b = aligned_alloc(64, bytes + 64);
  if (!a || !b) return 1;
  float *s = (float *)(a + 16), *d = (float *)(b + 16);
  for (size_t k = 0; k < (size_t)R * C; k++) s[k] = (float)k;
  transpose_small(s, d);
  for (size_t i = 0; i < R; i++)
    for (size_t j = 0; j < C; j++)
      if (d[j * R + i] != s[i * C + j]) {
        fprintf(stderr, "wrong small transpose at %zu, %zu\n", i, j);
        return 1;
      }
  double *t = calloc(2 * (size_t)rounds, sizeof(double));
  if (!t) return 1;
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < 2; k++) {
      double t0 = now();
      for (int n = 0; n < 2000; n++) {
        if (k == 0) memcpy(d, s, bytes);
        else transpose_small(s, d);
        __asm__ volatile("" : : "r"(d) : "memory");
      }
      t[k * rounds + r] = now() - t0;
    }
  printf("in the caches: f32[%d,%d] (%zu KiB), 16 bytes past a line, GB/s of output, median [min-max] of %d timings of 2000 runs\n", R, C, bytes >> 10, rounds);
  const char *names[] = {"memcpy", "transpose"};
  for (int k = 0; k < 2; k++) {
    double *v = t + k * rounds;
    qsort(v, rounds, sizeof(double), cmpd);
    double gb = 2000.0 * bytes * 1e-9;
    printf("%-18s %6.1f [%.1f-%.1f]\n", names[k], gb / v[rounds / 2], gb / v[rounds - 1], gb / v[0]);
  }
  free(t);
  free(a);
  free(b);
  return 0;
}

/* The whole transpose and its stores alone with destination rows 16 KiB apart (N floats) and
 * one line further (N + 16), on 4 KiB pages (MADV_NOHUGEPAGE) and on 2 MiB pages
 * (MADV_HUGEPAGE, where the kernel grants them: physically contiguous, so a power-of-two
 * virtual stride is one in physical addresses too), memcpy of the 64 MiB beside them. The
 * padding is what a user cannot do to an XLA array; it measures what the stride costs. */
static int by_stride(int rounds) {
  printf("by destination stride: ms per 64 MiB, median [min-max] of %d rounds\n", rounds);
  for (int huge = 0; huge < 2; huge++)
    for (size_t pad = 0; pad <= 16; pad += 16) {
      size_t ds = N + pad, bytes = (size_t)N * N * sizeof(float), align = 2u << 20;
      size_t sbytes = (bytes + align - 1) / align * align, dbytes = ((size_t)N * ds * sizeof(float) + align - 1) / align * align;
      float *s = aligned_alloc(align, sbytes), *d = aligned_alloc(align, dbytes);
      double *t = calloc(3 * (size_t)rounds, sizeof(double));
      if (!s || !d || !t) return 1;
      madvise(s, sbytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
      madvise(d, dbytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
      for (size_t k = 0; k < (size_t)N * N; k++) s[k] = (float)k;
      memset(d, 0, dbytes);
      transpose(s, d, ds, TRANSPOSE);
      for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < N; j++)
          if (d[j * ds + i] != s[i * N + j]) {
            fprintf(stderr, "wrong transpose at %zu, %zu (destination rows %zu floats apart)\n", i, j, ds);
            return 1;
          }
      for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 3; k++) {
          double t0 = now();
          if (k == 0) memcpy(d, s, bytes);
          else transpose(s, d, ds, k == 1 ? TRANSPOSE : STORES);
          t[k * rounds + r] = now() - t0;
        }
      printf("%s pages, destination rows %zu bytes apart\n", huge ? "2 MiB" : "4 KiB", ds * sizeof(float));
      const char *names[] = {"memcpy", "transpose", "stores alone"};
      print_medians("  ", names, 13, t, 3, rounds, NULL);
      free(t);
      free(s);
      free(d);
    }
  return 0;
}

int main(void) {
  const char *env = getenv("ROUNDS");
  int rounds = env ? atoi(env) : 7;
  if (rounds < 1 || rounds > 1000) rounds = 7;
  size_t bytes = (size_t)N * N * sizeof(float);
  float *s = aligned_alloc(64, bytes), *d = aligned_alloc(64, bytes);
  if (!s || !d) return 1;
  for (size_t k = 0; k < (size_t)N * N; k++) s[k] = (float)k;
  memset(d, 0, bytes);
  int avx2 = __builtin_cpu_supports("avx2"), avx512 = __builtin_cpu_supports("avx512f");
  /* Every transpose the CPU runs is checked. */
  for (int pass = 0; pass < 3; pass++) {
    if ((pass == 1 && !avx2) || (pass == 2 && !avx512)) continue;
    memset(d, 0, bytes);
    if (pass == 0) transpose(s, d, N, TRANSPOSE);
    else if (pass == 1) transpose_avx2(s, d);
    else transpose_avx512(s, d);
    for (size_t i = 0; i < N; i++)
      for (size_t j = 0; j < N; j++)
        if (d[j * N + i] != s[i * N + j]) {
          fprintf(stderr, "wrong transpose at %zu, %zu\n", i, j);
          return 1;
        }
  }
  const char *names[] = {"memcpy", "transpose", "loads + shuffles", "loads", "stores", "transpose, AVX2", "transpose, AVX-512"};
  int kinds = 7;
  double *t = calloc((size_t)kinds * rounds, sizeof(double));
  if (!t) return 1;
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < kinds; k++) {
      double t0 = now();
      switch (k) {
        case 0: memcpy(d, s, bytes); break;
        case 1: transpose(s, d, N, TRANSPOSE); break;
        case 2: transpose(s, d, N, SHUFFLES); break;
        case 3: transpose(s, d, N, LOADS); break;
        case 4: transpose(s, d, N, STORES); break;
        case 5:
          if (avx2) transpose_avx2(s, d);
          break;
        default:
          if (avx512) transpose_avx512(s, d);
          break;
      }
      t[k * rounds + r] = now() - t0;
    }
  printf("f32[4096,4096] transposed in 64 x 64 tiles, ms per 64 MiB, median [min-max] of %d rounds\n", rounds);
  const int skip[] = {0, 0, 0, 0, 0, !avx2, !avx512};
  print_medians("", names, 18, t, kinds, rounds, skip);
  if (!avx2) printf("(no AVX2 on this CPU: its row is left out)\n");
  if (!avx512) printf("(no AVX-512 on this CPU: its row is left out)\n");
  free(t);
  free(s);
  free(d);
  return in_the_caches(rounds) || by_stride(rounds);
}
