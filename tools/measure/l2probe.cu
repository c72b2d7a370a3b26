// l2probe: the L2 read ceiling, and for comparison L2 copies (bytes read +
// written) and writes, over buffers that stay in L2, for every combination of
// buffer size (2 to 16 MiB), block size and blocks per SM. measure.cu reads
// one 4 MiB buffer at full occupancy; the best read rate here is higher (a
// 2 MiB buffer at half occupancy), and a ceiling is the best rate a kernel
// reaches: the catalog's measured `l2` is the largest "read" figure.
//
// usage: nvcc -O3 -arch=sm_90 -o l2probe l2probe.cu && ./l2probe
#include <cstdio>
#include <cuda_runtime.h>
#include <algorithm>
#include <vector>
#define CK(x) do{cudaError_t e=(x); if(e){printf("%s\n",cudaGetErrorString(e)); return 1;}}while(0)
__device__ __forceinline__ float4 ldcg(const float4* p){float4 v; asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];":"=f"(v.x),"=f"(v.y),"=f"(v.z),"=f"(v.w):"l"(p)); return v;}
__device__ __forceinline__ void stcg(float4* p, float4 v){asm volatile("st.global.cg.v4.f32 [%0], {%1,%2,%3,%4};"::"l"(p),"f"(v.x),"f"(v.y),"f"(v.z),"f"(v.w));}
template<int ILP> __global__ void rd(const float4* p, size_t mask, size_t total, float* sink){
  size_t s=(size_t)gridDim.x*blockDim.x, i=(size_t)blockIdx.x*blockDim.x+threadIdx.x; float a=0;
  for(; i+(ILP-1)*s<total; i+=ILP*s){ float4 v[ILP];
#pragma unroll
    for(int k=0;k<ILP;k++) v[k]=ldcg(p+((i+k*s)&mask));
#pragma unroll
    for(int k=0;k<ILP;k++) a+=v[k].x+v[k].y+v[k].z+v[k].w; }
  if(a==-1.f) sink[0]=a; }
template<int ILP> __global__ void cp(const float4* src, float4* dst, size_t mask, size_t total){
  size_t s=(size_t)gridDim.x*blockDim.x, i=(size_t)blockIdx.x*blockDim.x+threadIdx.x;
  for(; i+(ILP-1)*s<total; i+=ILP*s){ float4 v[ILP];
#pragma unroll
    for(int k=0;k<ILP;k++) v[k]=ldcg(src+((i+k*s)&mask));
#pragma unroll
    for(int k=0;k<ILP;k++) stcg(dst+((i+k*s)&mask), v[k]); } }
template<int ILP> __global__ void wr(float4* dst, size_t mask, size_t total){
  size_t s=(size_t)gridDim.x*blockDim.x, i=(size_t)blockIdx.x*blockDim.x+threadIdx.x; float4 v=make_float4(1,2,3,4);
  for(; i+(ILP-1)*s<total; i+=ILP*s){
#pragma unroll
    for(int k=0;k<ILP;k++) stcg(dst+((i+k*s)&mask), v); } }
template<class F> float med(F f){ cudaEvent_t a,b; cudaEventCreate(&a); cudaEventCreate(&b); std::vector<float> t; for(int r=0;r<3;r++) f(); cudaDeviceSynchronize();
  for(int r=0;r<15;r++){ cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms,a,b); t.push_back(ms);} std::sort(t.begin(),t.end()); return t[t.size()/2]; }
int main(){
  cudaDeviceProp p; cudaGetDeviceProperties(&p,0); int sms=p.multiProcessorCount;
  printf("%s, %d SMs, L2 %d MiB\n", p.name, sms, p.l2CacheSize>>20);
  float4 *a,*b; float* sink; CK(cudaMalloc(&a,64<<20)); CK(cudaMalloc(&b,64<<20)); CK(cudaMalloc(&sink,4));
  cudaMemset(a,0,64<<20); cudaMemset(b,0,64<<20);
  size_t total=(8ULL<<30)/16;
  for(int threads: {256,512,1024}) for(int bps: {1,2,4,8}) for(size_t mib: {2,4,8,16}){
    size_t mask=(mib<<20)/16-1; int grid=sms*bps* (1024/threads>0?1:1);
    float m1=med([&]{rd<8><<<grid,threads>>>(a,mask,total,sink);});
    float m2=med([&]{cp<4><<<grid,threads>>>(a,b,mask,total/2);});
    float m3=med([&]{wr<8><<<grid,threads>>>(b,mask,total);});
    printf("threads %4d blocks/SM %d buf %2zu MiB: read %.0f GB/s, copy(r+w) %.0f GB/s, write %.0f GB/s\n", threads,bps,mib,
      16.0*total/m1/1e6, 2*16.0*(total/2)/m2/1e6, 16.0*total/m3/1e6);
  }
  return 0;
}
