/* The int4 pack under TPU tiles taken apart, against memcpy of its output, on this machine
 * (issue 36, item 2: `s4[8192,8192]{1,0}` → `{1,0:T(8,128)(8,1)E(4)}` at ≥ 0.5× memcpy).
 *
 *   benches/peers/pack_parts.sh          (compiles this with gcc -O2 and runs it)
 *
 * The source is 8192 rows of 8192 one-byte elements (64 MiB, malloc'd: 16 bytes past a cache line,
 * as a Vec<u8> or a numpy array), the destination 32 MiB (malloc'd too). Each 8-row tile-row
 * packs into 32 KiB of contiguous destination: column c's 32-bit word holds its 8 rows' low
 * nibbles, row 0 lowest, as `pack::pack_rows` writes them. The parts, each on its own (the
 * kernel is the crate's, written in C with the same SSE2 instructions: loads of one 16-byte lane
 * of each of the 8 rows, a mask, a shift and an or per row pair, two rounds of byte interleaves,
 * each row asked for 1 KiB ahead, non-temporal stores):
 *   memcpy          glibc's memcpy of the 32 MiB output (the baseline)
 *   pack            the whole kernel; checked against a scalar reference once
 *   pack, no pf     the same without the prefetches
 *   loads           its loads alone, in the kernel's order, with the prefetches (xor-folded)
 *   loads+pack      its loads and its arithmetic, no stores (xor-folded)
 *   stores          its non-temporal stores alone (a constant), 32 MiB in address order
 *   dense loads     the 64 MiB source read in address order (one stream: the dense `E(4)` pack's)
 *   memcpy/2        memcpy of 16 MiB: the dense `s2` pack's output (`s2[67108864]{0}` → `{0:E(2)}`),
 *                   which reads the same 64 MiB; its time over the dense loads' bounds that pack
 * Each row: median [min–max] of ROUNDS rounds (default 7), milliseconds, and memcpy / this.
 * Only SSE2 (the x86-64 baseline), like the crate's kernels. */
#include <emmintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"

#define COLS 8192
#define ROWS 8192
#define SRC ((size_t)COLS * ROWS)
#define DST (SRC / 2)
#define AHEAD 1024

static volatile int sink;

/* mode 0: whole; 1: without prefetch; 2: loads only; 3: loads and arithmetic, no stores. */
static double pack(const uint8_t *src, uint8_t *dst, int mode) {
  const __m128i mask = _mm_set1_epi8(0x0F);
  __m128i acc = _mm_setzero_si128();
  double t = now();
  for (size_t r0 = 0; r0 < ROWS; r0 += 8) {
    const uint8_t *row[8];
    for (int r = 0; r < 8; r++) row[r] = src + (r0 + r) * COLS;
    uint8_t *out = dst + r0 * COLS / 2;
    for (size_t c = 0; c < COLS; c += 16) {
      if (mode != 1 && c % 64 == 0 && c + AHEAD < COLS)
        for (int r = 0; r < 8; r++) _mm_prefetch((const char *)row[r] + c + AHEAD, _MM_HINT_T0);
      __m128i v[8];
      for (int r = 0; r < 8; r++) v[r] = _mm_loadu_si128((const __m128i *)(row[r] + c));
      if (mode == 2) {
        acc = _mm_xor_si128(acc, _mm_xor_si128(_mm_xor_si128(_mm_xor_si128(v[0], v[1]), _mm_xor_si128(v[2], v[3])),
                                               _mm_xor_si128(_mm_xor_si128(v[4], v[5]), _mm_xor_si128(v[6], v[7]))));
        continue;
      }
      __m128i g[4];
      for (int p = 0; p < 4; p++)
        g[p] = _mm_or_si128(_mm_and_si128(v[2 * p], mask), _mm_slli_epi16(_mm_and_si128(v[2 * p + 1], mask), 4));
      /* Two rounds of byte interleaves: column c's bytes g0[c] g1[c] g2[c] g3[c] together. */
      __m128i a0 = _mm_unpacklo_epi8(g[0], g[2]), a1 = _mm_unpackhi_epi8(g[0], g[2]);
      __m128i b0 = _mm_unpacklo_epi8(g[1], g[3]), b1 = _mm_unpackhi_epi8(g[1], g[3]);
      __m128i o0 = _mm_unpacklo_epi8(a0, b0), o1 = _mm_unpackhi_epi8(a0, b0);
      __m128i o2 = _mm_unpacklo_epi8(a1, b1), o3 = _mm_unpackhi_epi8(a1, b1);
      if (mode == 3) {
        acc = _mm_xor_si128(acc, _mm_xor_si128(_mm_xor_si128(o0, o1), _mm_xor_si128(o2, o3)));
        continue;
      }
      __m128i *to = (__m128i *)(out + c * 4);
      _mm_stream_si128(to, o0);
      _mm_stream_si128(to + 1, o1);
      _mm_stream_si128(to + 2, o2);
      _mm_stream_si128(to + 3, o3);
    }
  }
  _mm_sfence();
  t = now() - t;
  sink = _mm_cvtsi128_si32(acc);
  return t;
}

static double stores(uint8_t *dst) {
  const __m128i v = _mm_set1_epi8(0x5A);
  double t = now();
  for (size_t i = 0; i < DST; i += 64) {
    __m128i *to = (__m128i *)(dst + i);
    _mm_stream_si128(to, v);
    _mm_stream_si128(to + 1, v);
    _mm_stream_si128(to + 2, v);
    _mm_stream_si128(to + 3, v);
  }
  _mm_sfence();
  return now() - t;
}

static double dense_loads(const uint8_t *src) {
  __m128i acc = _mm_setzero_si128();
  double t = now();
  for (size_t i = 0; i < SRC; i += 64) {
    const __m128i *p = (const __m128i *)(src + i);
    acc = _mm_xor_si128(acc, _mm_xor_si128(_mm_xor_si128(_mm_loadu_si128(p), _mm_loadu_si128(p + 1)),
                                           _mm_xor_si128(_mm_loadu_si128(p + 2), _mm_loadu_si128(p + 3))));
  }
  t = now() - t;
  sink = _mm_cvtsi128_si32(acc);
  return t;
}

/* The source's lines, 8 rows at a time, `k` consecutive lines of each row before the next row. */
static double chunked_loads(const uint8_t *src, size_t k, int pf) {
  __m128i acc = _mm_setzero_si128();
  double t = now();
  for (size_t r0 = 0; r0 < ROWS; r0 += 8)
    for (size_t c = 0; c < COLS; c += 64 * k)
      for (int r = 0; r < 8; r++) {
        const uint8_t *row = src + (r0 + r) * COLS;
        for (size_t q = 0; q < 64 * k; q += 64) {
          if (pf && c + q + AHEAD < COLS) _mm_prefetch((const char *)row + c + q + AHEAD, _MM_HINT_T0);
          const __m128i *p = (const __m128i *)(row + c + q);
          acc = _mm_xor_si128(acc, _mm_xor_si128(_mm_xor_si128(_mm_loadu_si128(p), _mm_loadu_si128(p + 1)),
                                                 _mm_xor_si128(_mm_loadu_si128(p + 2), _mm_loadu_si128(p + 3))));
        }
      }
  t = now() - t;
  sink = _mm_cvtsi128_si32(acc);
  return t;
}

/* The crate's order (`pack::pack_rows`): blocks of 256 columns, each row's 4 lines of the block
 * asked for 1 KiB ahead, row after row, at the block's start; the block packed into 1 KiB of L1
 * with ordinary stores, then streamed out. */
static double blocked(const uint8_t *src, uint8_t *dst) {
  static __m128i block[64];
  const __m128i mask = _mm_set1_epi8(0x0F);
  double t = now();
  for (size_t r0 = 0; r0 < ROWS; r0 += 8) {
    const uint8_t *row[8];
    for (int r = 0; r < 8; r++) row[r] = src + (r0 + r) * COLS;
    uint8_t *out = dst + r0 * COLS / 2;
    for (size_t c0 = 0; c0 < COLS; c0 += 256) {
      for (int r = 0; r < 8; r++)
        for (size_t q = 0; q < 256; q += 64)
          if (c0 + q + AHEAD < COLS) _mm_prefetch((const char *)row[r] + c0 + q + AHEAD, _MM_HINT_T0);
      for (size_t c = 0; c < 256; c += 16) {
        __m128i v[8];
        for (int r = 0; r < 8; r++) v[r] = _mm_loadu_si128((const __m128i *)(row[r] + c0 + c));
        __m128i g[4];
        for (int p = 0; p < 4; p++)
          g[p] = _mm_or_si128(_mm_and_si128(v[2 * p], mask), _mm_slli_epi16(_mm_and_si128(v[2 * p + 1], mask), 4));
        __m128i a0 = _mm_unpacklo_epi8(g[0], g[2]), a1 = _mm_unpackhi_epi8(g[0], g[2]);
        __m128i b0 = _mm_unpacklo_epi8(g[1], g[3]), b1 = _mm_unpackhi_epi8(g[1], g[3]);
        __m128i *to = &block[c / 4];
        to[0] = _mm_unpacklo_epi8(a0, b0);
        to[1] = _mm_unpackhi_epi8(a0, b0);
        to[2] = _mm_unpacklo_epi8(a1, b1);
        to[3] = _mm_unpackhi_epi8(a1, b1);
      }
      __m128i *to = (__m128i *)(out + c0 * 4);
      for (int i = 0; i < 64; i++) _mm_stream_si128(to + i, block[i]);
    }
  }
  _mm_sfence();
  return now() - t;
}

/* The kernel on staged rows: `k` lines of each of the 8 rows copied into an L1 block (each
 * row's asked for 1 KiB ahead), then packed from there. */
static double staged(const uint8_t *src, uint8_t *dst, size_t k) {
  static __m128i stage[8][64 * 4 + 4 * 3];
  const __m128i mask = _mm_set1_epi8(0x0F);
  double t = now();
  for (size_t r0 = 0; r0 < ROWS; r0 += 8) {
    uint8_t *out = dst + r0 * COLS / 2;
    for (size_t c0 = 0; c0 < COLS; c0 += 64 * k) {
      for (int r = 0; r < 8; r++) {
        const uint8_t *row = src + (r0 + r) * COLS + c0;
        for (size_t q = 0; q < 64 * k; q += 64) {
          if (c0 + q + AHEAD < COLS) _mm_prefetch((const char *)row + q + AHEAD, _MM_HINT_T0);
          const __m128i *p = (const __m128i *)(row + q);
          __m128i *to = &stage[r][q / 16];
          to[0] = _mm_loadu_si128(p);
          to[1] = _mm_loadu_si128(p + 1);
          to[2] = _mm_loadu_si128(p + 2);
          to[3] = _mm_loadu_si128(p + 3);
        }
      }
      for (size_t c = 0; c < 64 * k; c += 16) {
        __m128i v[8];
        for (int r = 0; r < 8; r++) v[r] = stage[r][c / 16];
        __m128i g[4];
        for (int p = 0; p < 4; p++)
          g[p] = _mm_or_si128(_mm_and_si128(v[2 * p], mask), _mm_slli_epi16(_mm_and_si128(v[2 * p + 1], mask), 4));
        __m128i a0 = _mm_unpacklo_epi8(g[0], g[2]), a1 = _mm_unpackhi_epi8(g[0], g[2]);
        __m128i b0 = _mm_unpacklo_epi8(g[1], g[3]), b1 = _mm_unpackhi_epi8(g[1], g[3]);
        __m128i *to = (__m128i *)(out + (c0 + c) * 4);
        _mm_stream_si128(to, _mm_unpacklo_epi8(a0, b0));
        _mm_stream_si128(to + 1, _mm_unpackhi_epi8(a0, b0));
        _mm_stream_si128(to + 2, _mm_unpacklo_epi8(a1, b1));
        _mm_stream_si128(to + 3, _mm_unpackhi_epi8(a1, b1));
      }
    }
  }
  _mm_sfence();
  return now() - t;
}

static double copy(uint8_t *dst, const uint8_t *from, size_t n) {
  double t = now();
  memcpy(dst, from, n);
  t = now() - t;
  sink = dst[DST / 3];
  return t;
}

static double median(double *t, int n) {
  qsort(t, n, sizeof *t, cmpd);
  return t[n / 2];
}

int main(void) {
  int rounds = getenv("ROUNDS") ? atoi(getenv("ROUNDS")) : 7;
  if (rounds < 1 || rounds > 99) {
    fprintf(stderr, "ROUNDS must be 1 to 99\n");
    return 2;
  }
  uint8_t *src = malloc(SRC), *dst = malloc(DST), *other = malloc(DST);
  if (!src || !dst || !other) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  printf("source %% 64 = %lu, destination %% 64 = %lu\n", (unsigned long)((uintptr_t)src % 64),
         (unsigned long)((uintptr_t)dst % 64));
  for (size_t i = 0; i < SRC; i++) src[i] = (uint8_t)(i * 2654435761u >> 13);
  memset(dst, 1, DST);
  memset(other, 2, DST);
  /* The kernel against a scalar reference, once. */
  pack(src, dst, 0);
  for (size_t r0 = 0; r0 < ROWS; r0 += 8)
    for (size_t c = 0; c < COLS; c++)
      for (int p = 0; p < 4; p++) {
        uint8_t want = (uint8_t)((src[(r0 + 2 * p) * COLS + c] & 15) | (src[(r0 + 2 * p + 1) * COLS + c] & 15) << 4);
        if (dst[r0 * COLS / 2 + c * 4 + p] != want) {
          fprintf(stderr, "pack differs at row %zu column %zu byte %d\n", r0, c, p);
          return 1;
        }
      }
  const char *names[] = {"memcpy",     "pack",        "pack, no pf", "pack, blocked", "loads",     "loads+pack",
                         "stores",     "dense loads", "loads x4 pf", "loads x16 pf",  "staged x4", "staged x16",
                         "memcpy/2"};
  enum { N = 13 };
  double t[N][99];
  for (int k = 0; k < rounds; k++) {
    /* Alternated, so that every part sees the same hour of this VM's memory. */
    t[0][k] = copy(dst, other, DST);
    t[1][k] = pack(src, dst, 0);
    t[2][k] = pack(src, dst, 1);
    t[3][k] = blocked(src, dst);
    t[4][k] = pack(src, dst, 2);
    t[5][k] = pack(src, dst, 3);
    t[6][k] = stores(dst);
    t[7][k] = dense_loads(src);
    t[8][k] = chunked_loads(src, 4, 1);
    t[9][k] = chunked_loads(src, 16, 1);
    t[10][k] = staged(src, dst, 4);
    t[11][k] = staged(src, dst, 16);
    t[12][k] = copy(dst, other, DST / 2);
  }
  double base = 0;
  for (int i = 0; i < N; i++) {
    double lo = 1e9, hi = 0;
    for (int k = 0; k < rounds; k++) {
      lo = t[i][k] < lo ? t[i][k] : lo;
      hi = t[i][k] > hi ? t[i][k] : hi;
    }
    double m = median(t[i], rounds);
    if (i == 0) base = m;
    printf("%-12s %6.2f ms [%.2f–%.2f]  memcpy / this %.2f\n", names[i], m * 1e3, lo * 1e3, hi * 1e3, base / m);
  }
  printf("memcpy: %.1f GB/s of output bytes\n", DST / base / 1e9);
  /* The dense `s2` pack (`{0}` → `{0:E(2)}`) reads 64 MiB to write 16: reading alone bounds it. */
  printf("s2 pack bound: memcpy of its 16 MiB output / the 64 MiB read alone = %.2f\n",
         median(t[12], rounds) / median(t[7], rounds));
  return 0;
}
