#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
int32_t tec_k0_ya(const float *restrict x, float *restrict y);
int32_t tec_k1_yb(const float *restrict x, float *restrict y);
int32_t tec_k2_yd(const float *restrict x, float *restrict y);
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
int main(void){ float *x=malloc(4*200000),*y=malloc(4*200000); for(int i=0;i<200000;i++)x[i]=(float)((i*7919)%1000)/100-5;
 int32_t (*k[3])(const float*,float*)={tec_k0_ya,tec_k1_yb,tec_k2_yd};
 for(int j=0;j<3;j++){double best=1e9; for(int r=0;r<300;r++){double t=now();k[j](x,y);t=now()-t;if(t<best)best=t;} printf("k%d %.1f us\n",j,best);}
 double s=0; for(int i=0;i<150528;i++)s+=y[i]; printf("%g\n",s); }
