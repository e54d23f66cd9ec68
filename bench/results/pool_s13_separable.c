#include <stdint.h>
#include <math.h>
#include <stdlib.h>
typedef float v16 __attribute__((vector_size(64), aligned(4), may_alias));
typedef float v8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef float v4 __attribute__((vector_size(16), aligned(4), may_alias));
static const v16 ninf={-INFINITY,-INFINITY,-INFINITY,-INFINITY,-INFINITY,-INFINITY,-INFINITY,-INFINITY,-INFINITY,-INFINITY,-INFINITY,-INFINITY,-INFINITY,-INFINITY,-INFINITY,-INFINITY};
static inline v16 mx(v16 a, v16 b){ return __builtin_ia32_maxps512_mask(b,a,b,__builtin_ia32_cmpps512_mask(a,a,7,(unsigned short)-1,4),4);}
/* separable: padded copy as before, then row maxima of 3 columns per padded row, then columns */
int32_t tec_k0_ya(const float *restrict x, float *restrict y)
{
  for (int64_t c = 0; c < 192; ++c) {
    float xp[904+32]; float h[30*32];
    for (int i=0;i<30;i++){ xp[i*30]=-INFINITY; xp[i*30+29]=-INFINITY;
      if(i>=1&&i<29){ *(v16*)&xp[i*30+1]=*(v16*)&x[c*784+(i-1)*28]; *(v8*)&xp[i*30+17]=*(v8*)&x[c*784+(i-1)*28+16]; *(v4*)&xp[i*30+25]=*(v4*)&x[c*784+(i-1)*28+24];}
      else { *(v16*)&xp[i*30+1]=ninf; *(v8*)&xp[i*30+17]=(v8){-INFINITY,-INFINITY,-INFINITY,-INFINITY,-INFINITY,-INFINITY,-INFINITY,-INFINITY}; *(v4*)&xp[i*30+25]=(v4){-INFINITY,-INFINITY,-INFINITY,-INFINITY}; } }
    for (int i=0;i<30;i++) for(int q=0;q<32;q+=16){ v16 a=*(v16*)&xp[i*30+q], b=*(v16*)&xp[i*30+q+1], d=*(v16*)&xp[i*30+q+2];
        *(v16*)&h[i*32+q]=mx(mx(a,b),d);}
    for (int p=0;p<28;p++){ v16 r0=mx(mx(*(v16*)&h[p*32],*(v16*)&h[p*32+32]),*(v16*)&h[p*32+64]);
        v16 r1=mx(mx(*(v16*)&h[p*32+16],*(v16*)&h[p*32+48]),*(v16*)&h[p*32+80]);
        *(v16*)&y[c*784+p*28]=r0; *(v8*)&y[c*784+p*28+16]=__builtin_shufflevector(r1,r1,0,1,2,3,4,5,6,7); *(v4*)&y[c*784+p*28+24]=__builtin_shufflevector(r1,r1,8,9,10,11); }
  }
  return 0;
}
