/* A u8 transpose taken apart, against memcpy, on this machine (issue 36: why `u8[8192,8192]`
 * transposes at 0.33-0.43 of memcpy where f32 runs at 0.6-0.7; docs/relayout.md, "Why the u8
 * transpose misses").
 *
 *   gcc -O3 -funroll-loops -o /tmp/byte_transpose benches/peers/byte_transpose.c && /tmp/byte_transpose
 *
 * u8[8192,8192] (64 MiB) row-major -> column-major, both buffers on a cache line (aligned_alloc,
 * 4 KiB pages), in 64 x 64 tiles as the crate's kernel walks them: a band of 512 columns, each
 * tile-row of the band 64 source rows (8 lines of each), each tile 4 x 4 blocks of 16 x 16 bytes
 * transposed with SSE2 unpacks (4 rounds of 16), every destination line written whole with
 * non-temporal stores. Each row of the output is the median [min-max] over ROUNDS rounds
 * (default 7) of the milliseconds per 64 MiB, and memcpy's time over it:
 *   memcpy                 glibc's memcpy of the 64 MiB
 *   transpose              the whole transpose
 *   stores                 its non-temporal stores alone (a constant; no source traffic)
 *   loads + shuffles       its loads and unpacks alone, xor-folded into a register
 *   in cache, 8192 apart   the loads and unpacks of the first tile-row's band over and over (64
 *                          rows of 512 bytes, 32 KiB, in the caches): the instructions alone
 *   in cache, 8256 apart   the same with the rows one line further apart
 *   staged, ahead          the whole transpose with each tile's 64 source lines copied whole into
 *                          a 4 KiB buffer first, and the band's lines two tile-rows on asked for
 *                          (prefetcht1; AHEAD=K tile-rows on, default 2), 64 per tile, in row
 *                          order (the crate's `plan::stages`)
 *   staged                 the same without asking ahead
 *   staged, ahead, no stores  its loads, copies and shuffles alone, xor-folded into a register
 * (The crate's kernel walks the same tiles with the loops the other way round: a band of 512
 * source rows, 64 destination rows at a time; the causes below are the same.)
 * If "in cache, 8192 apart" is far slower than "8256 apart", the 64 rows of a tile, all in one
 * set of the 8-way first-level cache, evict each other between the four 16-byte loads a line
 * gets: power-of-two rows cost the narrow transposes their instructions' speed before memory
 * does. If "loads + shuffles" is far slower than "in cache", the reads of 64 rows in step (see
 * rows_in_step.c) cost the rest. Only SSE2 (the x86-64 baseline), like the crate's kernels. */
#include <emmintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timing.h"

#define ROWS 8192
#define COLS 8192
#define TOTAL ((size_t)ROWS * COLS)
#define BAND 512
#define T 64

enum { TRANSPOSE, STORES, SHUFFLES, IN_CACHE, STAGED, STAGED_ONLY, STAGED_LOADS };

static volatile long long folded;

/* How many tile-rows on the staged transposes ask for their source (AHEAD, default 2). */
static size_t far = 2;

/* 16 x 16 bytes: x[r] holds row r; afterwards x[c] holds column c. */
static inline void block16(__m128i *x) {
  __m128i y[16];
  for (int round = 0; round < 2; round++) {
    for (int k = 0; k < 8; k++) {
      y[2 * k] = _mm_unpacklo_epi8(x[k], x[k + 8]);
      y[2 * k + 1] = _mm_unpackhi_epi8(x[k], x[k + 8]);
    }
    for (int k = 0; k < 8; k++) {
      x[2 * k] = _mm_unpacklo_epi8(y[k], y[k + 8]);
      x[2 * k + 1] = _mm_unpackhi_epi8(y[k], y[k + 8]);
    }
  }
}

/* One 64 x 64 tile: source rows `s + r * ss`, destination rows `d + c * ds`. */
static inline __m128i tile(const unsigned char *s, size_t ss, unsigned char *d, size_t ds, int mode, __m128i acc) {
  for (int ib = 0; ib < 4; ib++) {
    __m128i out[16][4];
    for (int jb = 0; jb < 4; jb++) {
      __m128i x[16];
      for (int r = 0; r < 16; r++) x[r] = _mm_loadu_si128((const __m128i *)(s + (jb * 16 + r) * ss + ib * 16));
      block16(x);
      for (int c = 0; c < 16; c++) out[c][jb] = x[c];
    }
    for (int c = 0; c < 16; c++) {
      if (mode == SHUFFLES || mode == IN_CACHE) {
        acc = _mm_xor_si128(acc, _mm_xor_si128(_mm_xor_si128(out[c][0], out[c][1]), _mm_xor_si128(out[c][2], out[c][3])));
        continue;
      }
      __m128i *p = (__m128i *)(d + (ib * 16 + c) * ds);
      for (int k = 0; k < 4; k++) _mm_stream_si128(p + k, out[c][k]);
    }
  }
  return acc;
}

/* The band's lines of tile-row `i` (64 rows of BAND bytes), tile `t`'s share: lines t*64 .. t*64+63
 * of the block in row order. */
static inline void ahead(const unsigned char *s, size_t pitch, size_t i, size_t j0, size_t t) {
  if (i >= ROWS) return;
  for (size_t k = 0; k < 64; k++) {
    size_t line = t * 64 + k;
    _mm_prefetch((const char *)(s + (i + line / (BAND / 64)) * pitch + j0 + (line % (BAND / 64)) * 64), _MM_HINT_T1);
  }
}

static void transpose(const unsigned char *s, size_t pitch, unsigned char *d, int mode) {
  static unsigned char staged[T * T] __attribute__((aligned(64)));
  __m128i acc = _mm_setzero_si128();
  for (size_t j0 = 0; j0 < COLS; j0 += BAND)
    for (size_t i = 0; i < ROWS; i += T)
      for (size_t j = j0; j < j0 + BAND; j += T) {
        unsigned char *to = d + j * ROWS + i;
        if (mode == STORES) {
          for (int c = 0; c < T; c++) {
            __m128i v = _mm_set1_epi8((char)c), *p = (__m128i *)(to + c * ROWS);
            for (int k = 0; k < 4; k++) _mm_stream_si128(p + k, v);
          }
        } else if (mode == IN_CACHE) {
          acc = tile(s + (j - j0), pitch, to, ROWS, mode, acc);
        } else if (mode >= STAGED) {
          if (mode != STAGED_ONLY) ahead(s, pitch, i + far * T, j0, (j - j0) / T);
          const unsigned char *from = s + i * pitch + j;
          for (int r = 0; r < T; r++) {
            const __m128i *p = (const __m128i *)(from + r * pitch);
            __m128i a = _mm_loadu_si128(p), b = _mm_loadu_si128(p + 1), c = _mm_loadu_si128(p + 2),
                    e = _mm_loadu_si128(p + 3);
            __m128i *q = (__m128i *)(staged + r * T);
            _mm_store_si128(q, a);
            _mm_store_si128(q + 1, b);
            _mm_store_si128(q + 2, c);
            _mm_store_si128(q + 3, e);
          }
          acc = tile(staged, T, to, ROWS, mode == STAGED_LOADS ? SHUFFLES : mode, acc);
        } else {
          acc = tile(s + i * pitch + j, pitch, to, ROWS, mode, acc);
        }
      }
  _mm_sfence();
  folded = _mm_cvtsi128_si64(acc);
}

int main(void) {
  const char *env = getenv("ROUNDS");
  int rounds = env ? atoi(env) : 7;
  if (rounds < 1 || rounds > 1000) rounds = 7;
  const char *ahead_env = getenv("AHEAD");
  if (ahead_env && atoi(ahead_env) >= 1 && atoi(ahead_env) <= 64) far = (size_t)atoi(ahead_env);
  unsigned char *s = aligned_alloc(4096, TOTAL), *d = aligned_alloc(4096, TOTAL);
  if (!s || !d) return 1;
  for (size_t k = 0; k < TOTAL; k++) s[k] = (unsigned char)(k * 7 + (k >> 13));
  memset(d, 0, TOTAL);
  /* Every transpose that writes the destination is checked. */
  const int checked[] = {TRANSPOSE, STAGED, STAGED_ONLY};
  for (int c = 0; c < 3; c++) {
    int mode = checked[c];
    memset(d, 0, TOTAL);
    transpose(s, COLS, d, mode);
    for (size_t i = 0; i < ROWS; i++)
      for (size_t j = 0; j < COLS; j++)
        if (d[j * ROWS + i] != s[i * COLS + j]) {
          fprintf(stderr, "wrong transpose at %zu, %zu\n", i, j);
          return 1;
        }
  }
  const char *names[] = {"memcpy",        "transpose",           "stores",
                         "loads + shuffles", "in cache, 8192 apart", "in cache, 8256 apart",
                         "staged, ahead", "staged",             "staged, ahead, no stores"};
  enum { KINDS = 9 };
  double *t = calloc((size_t)KINDS * rounds, sizeof(double));
  if (!t) return 1;
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < KINDS; k++) {
      double t0 = now();
      switch (k) {
        case 0: memcpy(d, s, TOTAL); break;
        case 1: transpose(s, COLS, d, TRANSPOSE); break;
        case 2: transpose(s, COLS, d, STORES); break;
        case 3: transpose(s, COLS, d, SHUFFLES); break;
        case 4: transpose(s, COLS, d, IN_CACHE); break;
        case 5: transpose(s, COLS + 64, d, IN_CACHE); break;
        case 6: transpose(s, COLS, d, STAGED); break;
        case 7: transpose(s, COLS, d, STAGED_ONLY); break;
        default: transpose(s, COLS, d, STAGED_LOADS); break;
      }
      t[k * rounds + r] = now() - t0;
    }
  printf("u8[8192,8192] transposed in 64 x 64 tiles, ms per 64 MiB, median [min-max] of %d rounds (staged: %zu tile-rows ahead)\n", rounds, far);
  print_medians("  ", names, 26, t, KINDS, rounds, NULL);
  free(t);
  free(s);
  free(d);
  return 0;
}
