/* A rows kernel's two walks alone, against memcpy, on this machine (issue 36; docs/relayout.md
 * rule 10, "Rows in source order"):
 *
 *   gcc -O2 -o /tmp/row_walks benches/peers/row_walks.c && /tmp/row_walks C H ROWB
 *
 * 64 MiB of row-major rows of ROWB bytes cut into tiles of H rows by C bytes (C = 512, H = 8,
 * ROWB = 16384: f32[4096,4096] to T(8,128)); every run of C bytes copied with streaming stores
 * (movntdq), page-aligned buffers. Medians of 9 rounds, milliseconds per 64 MiB:
 *   rm->T src-order   the source in address order, each run streamed to its tile (what the
 *                     crate does when every run is whole destination lines)
 *   rm->T dst-order   the destination in address order: H source rows read C bytes at a time
 *   T->rm dst-order   row-major rows in order, the runs read from H tiles
 *   T->rm src-order   the tiles in address order, each run streamed to its row
 * Only SSE2 (the x86-64 baseline), like the crate's kernels. */
#include <emmintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"
#define TOTAL ((size_t)64<<20)
static inline void ntc(char*d,const char*s,int C){
  for(int i=0;i<C;i+=64){
    __m128i a=_mm_loadu_si128((const __m128i*)(s+i)),b=_mm_loadu_si128((const __m128i*)(s+i+16)),c=_mm_loadu_si128((const __m128i*)(s+i+32)),e=_mm_loadu_si128((const __m128i*)(s+i+48));
    _mm_stream_si128((__m128i*)(d+i),a);_mm_stream_si128((__m128i*)(d+i+16),b);_mm_stream_si128((__m128i*)(d+i+32),c);_mm_stream_si128((__m128i*)(d+i+48),e);
  }
}
int main(int argc,char**argv){
  if(argc<4){fprintf(stderr,"usage: %s C H ROWB (e.g. 512 8 16384)\n",argv[0]);return 2;}
  int C=atoi(argv[1]), H=atoi(argv[2]); size_t ROWB=atol(argv[3]);
  size_t ROWS=TOTAL/ROWB; size_t TC=ROWB/C; // tiles per tile-row
  char*s=aligned_alloc(4096,TOTAL),*d=aligned_alloc(4096,TOTAL);
  memset(s,1,TOTAL);memset(d,2,TOTAL);
  double r[5][9];
  for(int round=0;round<9;round++){
    double t0=now(); memcpy(d,s,TOTAL); r[0][round]=now()-t0;
    // rm->tiled, source order
    t0=now();
    for(size_t tr=0;tr<ROWS/H;tr++) for(int h=0;h<H;h++) for(size_t c=0;c<TC;c++) ntc(d+tr*H*ROWB+c*H*C+h*C, s+(tr*H+h)*ROWB+c*C, C);
    _mm_sfence(); r[1][round]=now()-t0;
    t0=now();
    for(size_t tr=0;tr<ROWS/H;tr++) for(size_t c=0;c<TC;c++) for(int h=0;h<H;h++) ntc(d+tr*H*ROWB+c*H*C+h*C, s+(tr*H+h)*ROWB+c*C, C);
    _mm_sfence(); r[2][round]=now()-t0;
    // tiled->rm, dest order (= the same address maps swapped): reading tiles scattered, writing rm rows in order
    t0=now();
    for(size_t tr=0;tr<ROWS/H;tr++) for(int h=0;h<H;h++) for(size_t c=0;c<TC;c++) ntc(s+(tr*H+h)*ROWB+c*C, d+tr*H*ROWB+c*H*C+h*C, C);
    _mm_sfence(); r[3][round]=now()-t0;
    t0=now();
    for(size_t tr=0;tr<ROWS/H;tr++) for(size_t c=0;c<TC;c++) for(int h=0;h<H;h++) ntc(s+(tr*H+h)*ROWB+c*C, d+tr*H*ROWB+c*H*C+h*C, C);
    _mm_sfence(); r[4][round]=now()-t0;
  }
  for(int k=0;k<5;k++) qsort(r[k],9,sizeof(double),cmpd);
  printf("C=%d H=%d rowB=%zu: memcpy %.2f | rm->T src-order %.2f dst-order %.2f | T->rm dst-order(rm rows in order) %.2f src-order %.2f ms\n",C,H,ROWB,r[0][4]*1e3,r[1][4]*1e3,r[2][4]*1e3,r[3][4]*1e3,r[4][4]*1e3);
}
