// lathide: latency-hiding curves for gpucalc's simulator (issue 5).
//
// Two kernels, as in shared/groundtruth/h100/lat_hide.csv section 1:
//   read  streams 2 GiB with ILP independent 16-byte loads per thread per
//         iteration (grid-stride, one wave of blocks);
//   fma   runs ILP independent chains of dependent FMAs per thread for 65536
//         steps.
// Residency per SM is capped with dynamic shared memory so that exactly
// blocks_per_sm blocks fit on each SM; the grid is one wave (blocks_per_sm x
// SMs). Each point is the median of 7 timed runs after one warm-up run.
//
// Output (stdout): kind,ilp,block,blocks_per_sm,warps_per_sm,dyn_smem,ms,gbps,gflops
// Build: nvcc -O3 -arch=sm_90 -o lathide lathide.cu
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(x)                                                                             \
  do {                                                                                    \
    cudaError_t e_ = (x);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

constexpr long long kReadBytes = 2LL << 30;
constexpr int kSteps = 65536;
constexpr int kRuns = 7;

template <int ILP>
__global__ void read_kernel(const float4* __restrict__ p, long long n, float* sink) {
  long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.f;
  // unroll 1: the compiler must not overlap loads of successive iterations,
  // which would raise the loads in flight above ILP.
#pragma unroll 1
  for (; i + (ILP - 1) * stride < n; i += ILP * stride) {
    float4 v[ILP];
#pragma unroll
    for (int k = 0; k < ILP; k++) v[k] = p[i + k * stride];
#pragma unroll
    for (int k = 0; k < ILP; k++) acc += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  }
#pragma unroll 1
  for (; i < n; i += stride) {
    float4 v = p[i];
    acc += (v.x + v.y) + (v.z + v.w);
  }
  if (acc == -1.f) sink[0] = acc;  // never true; keeps the loads
}

// The multiplier and addend are literals: as kernel parameters ptxas loads
// them into registers, and with one chain (ILP 1) the FFMA's register
// operands then collide in a register bank, halving its issue rate.
template <int ILP>
__global__ void fma_kernel(int steps, float* sink) {
  float x[ILP];
#pragma unroll
  for (int k = 0; k < ILP; k++) x[k] = threadIdx.x * 1e-3f + k;
#pragma unroll 16
  for (int s = 0; s < steps; s++) {
#pragma unroll
    for (int k = 0; k < ILP; k++) x[k] = fmaf(x[k], 1.0000001f, 1e-7f);
  }
  float sum = 0.f;
#pragma unroll
  for (int k = 0; k < ILP; k++) sum += x[k];
  if (sum == -1.f) sink[0] = sum;  // never true; keeps the chains
}

struct Device {
  int sms, smemPerSM, reserved, optin;
};

// dynSmemFor returns the dynamic shared memory that leaves room for exactly
// want blocks per SM (the (want+1)-th does not fit), checked with the
// occupancy calculator; -1 if no size gives exactly want. It starts where the
// ground truth's sizes lie (a share of the SM's shared memory, less the
// per-block reservation, plus one 128-byte unit) and steps by 128 bytes.
static int dynSmemFor(const void* fn, int block, int want, const Device& d) {
  int dyn = std::min(d.smemPerSM / (want + 1) - d.reserved + 128, d.optin);
  for (int tries = 0; tries < 64 && dyn >= 0 && dyn <= d.optin; tries++) {
    int got = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&got, fn, block, dyn));
    if (got == want) return dyn;
    dyn += got < want ? -128 : 128;
  }
  return -1;
}

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename Launch>
static float timeMs(Launch launch) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  launch();  // warm-up
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int r = 0; r < kRuns; r++) {
    CK(cudaEventRecord(e0));
    launch();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaGetLastError());
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms);
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return median(t);
}

template <typename K>
static void prepare(K* fn, const Device& d) {
  CK(cudaFuncSetAttribute((const void*)fn, cudaFuncAttributeMaxDynamicSharedMemorySize, d.optin));
  CK(cudaFuncSetAttribute((const void*)fn, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
}

template <int ILP>
static void sweepRead(int block, int warpStart, int warpStep, int warpEnd, const Device& d, const float4* buf, float* sink) {
  auto fn = read_kernel<ILP>;
  prepare(fn, d);
  long long n = kReadBytes / 16;
  for (int w = warpStart; w <= warpEnd; w += warpStep) {
    int bps = w * 32 / block;
    int dyn = dynSmemFor((const void*)fn, block, bps, d);
    if (dyn < 0) {
      fprintf(stderr, "read ilp=%d block=%d: no shared-memory size gives %d blocks/SM; skipped\n", ILP, block, bps);
      continue;
    }
    int grid = bps * d.sms;
    float ms = timeMs([&] { fn<<<grid, block, dyn>>>(buf, n, sink); });
    printf("read,%d,%d,%d,%d,%d,%.4f,%.1f,0\n", ILP, block, bps, w, dyn, ms, kReadBytes / (ms * 1e6));
    fflush(stdout);
  }
}

template <int ILP>
static void sweepFMA(int block, int warpStart, int warpStep, int warpEnd, const Device& d, float* sink) {
  auto fn = fma_kernel<ILP>;
  prepare(fn, d);
  for (int w = warpStart; w <= warpEnd; w += warpStep) {
    int bps = w * 32 / block;
    int dyn = dynSmemFor((const void*)fn, block, bps, d);
    if (dyn < 0) {
      fprintf(stderr, "fma ilp=%d block=%d: no shared-memory size gives %d blocks/SM; skipped\n", ILP, block, bps);
      continue;
    }
    int grid = bps * d.sms;
    float ms = timeMs([&] { fn<<<grid, block, dyn>>>(kSteps, sink); });
    double flops = 2.0 * grid * block * ILP * (double)kSteps;
    printf("fma,%d,%d,%d,%d,%d,%.4f,0,%.1f\n", ILP, block, bps, w, dyn, ms, flops / (ms * 1e6));
    fflush(stdout);
  }
}

// Warps per SM swept for each block size: 1..32 for 32-thread blocks (at
// most 32 blocks per SM), 4..64 step 4 for 128, 8..64 step 8 for 256.
template <int ILP>
static void readCurves(const Device& d, const float4* buf, float* sink) {
  sweepRead<ILP>(32, 1, 1, 32, d, buf, sink);
  sweepRead<ILP>(128, 4, 4, 64, d, buf, sink);
  sweepRead<ILP>(256, 8, 8, 64, d, buf, sink);
}

template <int ILP>
static void fmaCurves(const Device& d, float* sink) {
  sweepFMA<ILP>(32, 1, 1, 32, d, sink);
  sweepFMA<ILP>(128, 4, 4, 64, d, sink);
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  Device d{p.multiProcessorCount, (int)p.sharedMemPerMultiprocessor, (int)p.reservedSharedMemPerBlock,
           (int)p.sharedMemPerBlockOptin};
  fprintf(stderr, "lathide: %s, %d SMs, %d B shared memory per SM\n", p.name, d.sms, d.smemPerSM);
  float4* buf;
  float* sink;
  CK(cudaMalloc(&buf, kReadBytes));
  CK(cudaMemset(buf, 0x3f, kReadBytes));
  CK(cudaMalloc(&sink, 16));
  printf("kind,ilp,block,blocks_per_sm,warps_per_sm,dyn_smem,ms,gbps,gflops\n");
  readCurves<1>(d, buf, sink);
  readCurves<2>(d, buf, sink);
  readCurves<4>(d, buf, sink);
  fmaCurves<1>(d, sink);
  fmaCurves<2>(d, sink);
  fmaCurves<4>(d, sink);
  fmaCurves<8>(d, sink);
  CK(cudaFree(buf));
  CK(cudaFree(sink));
  return 0;
}
