// measure: micro-benchmarks of the GPU at hand, for gpucalc's measured
// ceilings (issue 10). measure.py builds and runs it, adds the GEMM peaks from
// PyTorch, and writes the device file.
//
// Prints one "key=value" line per figure on stdout (bandwidths in GB/s,
// decimal; rates in GFLOP/s; times in microseconds; latencies in SM cycles)
// and what it did on stderr. Every figure is the median of kReps timed runs
// (CUDA events) after kWarm warm-up runs.
//
// Build: nvcc -O3 -arch=sm_90 -o measure measure.cu
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
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

constexpr int kWarm = 3;
constexpr int kReps = 20;
constexpr size_t kDRAMBytes = 4ULL << 30;  // per buffer: far beyond any L2

// ---- timing ---------------------------------------------------------------

template <typename Launch>
static float medianMs(Launch launch, int reps = kReps) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int i = 0; i < kWarm; i++) launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int r = 0; r < reps; r++) {
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
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

static double gbps(double bytes, float ms) { return bytes / (ms * 1e6); }

static int sms;

// fullGrid is one wave of blocks at the kernel's full residency.
static int fullGrid(const void* fn, int block, size_t dyn = 0) {
  int per = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, fn, block, dyn));
  if (per < 1) {
    fprintf(stderr, "a kernel cannot run with %d threads per block\n", block);
    exit(1);
  }
  return per * sms;
}

// ---- DRAM and L2 ----------------------------------------------------------

// Loads that bypass L1 (cached in L2 only); volatile so that repeated passes
// over one buffer are not merged by the compiler.
__device__ __forceinline__ float4 ldcg(const float4* p) {
  float4 v;
  asm volatile("ld.global.cg.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
}

__device__ __forceinline__ float sum4(float4 v) { return (v.x + v.y) + (v.z + v.w); }

template <int ILP>
__global__ void read_kernel(const float4* __restrict__ p, size_t n, float* sink) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.f;
  for (; i + (ILP - 1) * stride < n; i += ILP * stride) {
    float4 v[ILP];
#pragma unroll
    for (int k = 0; k < ILP; k++) v[k] = p[i + k * stride];
#pragma unroll
    for (int k = 0; k < ILP; k++) acc += sum4(v[k]);
  }
  for (; i < n; i += stride) acc += sum4(p[i]);
  if (acc == -1.f) sink[0] = acc;  // never true; keeps the loads
}

// l2_kernel reads total float4 from a buffer of mask+1 (a power of two),
// wrapping around, with L2-only loads: the buffer stays in L2.
template <int ILP>
__global__ void l2_kernel(const float4* __restrict__ p, size_t mask, size_t total, float* sink) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.f;
  for (; i + (ILP - 1) * stride < total; i += ILP * stride) {
    float4 v[ILP];
#pragma unroll
    for (int k = 0; k < ILP; k++) v[k] = ldcg(p + ((i + k * stride) & mask));
#pragma unroll
    for (int k = 0; k < ILP; k++) acc += sum4(v[k]);
  }
  for (; i < total; i += stride) acc += sum4(ldcg(p + (i & mask)));
  if (acc == -1.f) sink[0] = acc;
}

template <int ILP>
__global__ void write_kernel(float4* __restrict__ p, size_t n, float x) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  float4 v = make_float4(x, x, x, x);
  for (; i + (ILP - 1) * stride < n; i += ILP * stride) {
#pragma unroll
    for (int k = 0; k < ILP; k++) p[i + k * stride] = v;
  }
  for (; i < n; i += stride) p[i] = v;
}

template <int ILP>
__global__ void copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, size_t n) {
  size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + (ILP - 1) * stride < n; i += ILP * stride) {
    float4 v[ILP];
#pragma unroll
    for (int k = 0; k < ILP; k++) v[k] = src[i + k * stride];
#pragma unroll
    for (int k = 0; k < ILP; k++) dst[i + k * stride] = v[k];
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

template <int ILP>
static double readGBps(const float4* buf, size_t bytes, float* sink) {
  auto fn = read_kernel<ILP>;
  int grid = fullGrid((const void*)fn, 256);
  float ms = medianMs([&] { fn<<<grid, 256>>>(buf, bytes / 16, sink); });
  return gbps((double)bytes, ms);
}

// l2GBps reads 8 GiB in all from a buffer of bytes (a power of two).
template <int ILP>
static double l2GBps(const float4* buf, size_t bytes, float* sink) {
  auto fn = l2_kernel<ILP>;
  int grid = fullGrid((const void*)fn, 256);
  size_t total = (8ULL << 30) / 16;
  float ms = medianMs([&] { fn<<<grid, 256>>>(buf, bytes / 16 - 1, total, sink); });
  return gbps(16.0 * total, ms);
}

template <int ILP>
static double writeGBps(float4* buf, size_t bytes) {
  auto fn = write_kernel<ILP>;
  int grid = fullGrid((const void*)fn, 256);
  float ms = medianMs([&] { fn<<<grid, 256>>>(buf, bytes / 16, 1.5f); });
  return gbps((double)bytes, ms);
}

template <int ILP>
static double copyGBps(const float4* src, float4* dst, size_t bytes) {
  auto fn = copy_kernel<ILP>;
  int grid = fullGrid((const void*)fn, 256);
  float ms = medianMs([&] { fn<<<grid, 256>>>(src, dst, bytes / 16); });
  return gbps(2.0 * bytes, ms);  // bytes read plus bytes written
}

// ---- shared memory --------------------------------------------------------

constexpr int kSmemBlock = 256, kSmemK = 8;  // 8 float4 per thread: 32 KiB per block

__global__ void __launch_bounds__(kSmemBlock) smem_kernel(int iters, float* sink) {
  __shared__ float4 s[kSmemBlock * kSmemK];
  for (int i = threadIdx.x; i < kSmemBlock * kSmemK; i += blockDim.x) s[i] = make_float4(i, i + 1, i + 2, i + 3);
  __syncthreads();
  // A warp reads 512 consecutive bytes per load: conflict-free.
  unsigned base = (unsigned)__cvta_generic_to_shared(&s[threadIdx.x]);
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int it = 0; it < iters; it++) {
#pragma unroll
    for (int k = 0; k < kSmemK; k++) {
      float4 v;
      // .volatile: otherwise ptxas hoists the loads of one address out of the loop.
      asm volatile("ld.volatile.shared.v4.f32 {%0,%1,%2,%3}, [%4];"
                   : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                   : "r"(base + k * kSmemBlock * 16));
      acc.x += v.x;
      acc.y += v.y;
      acc.z += v.z;
      acc.w += v.w;
    }
  }
  if (sum4(acc) == -1.f) sink[0] = sum4(acc);
}

static double smemGBps(float* sink) {
  CK(cudaFuncSetAttribute((const void*)smem_kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
  int grid = fullGrid((const void*)smem_kernel, kSmemBlock);
  const int iters = 4096;
  float ms = medianMs([&] { smem_kernel<<<grid, kSmemBlock>>>(iters, sink); });
  return gbps((double)grid * kSmemBlock * iters * kSmemK * 16, ms);
}

// ---- FMA peaks ------------------------------------------------------------

__device__ __forceinline__ float fmaT(float x, float a, float b) { return fmaf(x, a, b); }
__device__ __forceinline__ double fmaT(double x, double a, double b) { return fma(x, a, b); }

// fma_peak runs kChains independent FMA chains per thread.
constexpr int kChains = 8;

template <typename T>
__global__ void fma_peak(T a, T b, int steps, T* sink) {
  T x[kChains];
#pragma unroll
  for (int k = 0; k < kChains; k++) x[k] = (T)threadIdx.x * (T)1e-3 + (T)k;
#pragma unroll 16
  for (int s = 0; s < steps; s++) {
#pragma unroll
    for (int k = 0; k < kChains; k++) x[k] = fmaT(x[k], a, b);
  }
  T sum = 0;
#pragma unroll
  for (int k = 0; k < kChains; k++) sum += x[k];
  if (sum == (T)-1) sink[0] = sum;  // never true; keeps the chains
}

template <typename T>
static double fmaGFLOPS(int steps) {
  auto fn = fma_peak<T>;
  int grid = fullGrid((const void*)fn, 256);
  T* sink;
  CK(cudaMalloc(&sink, sizeof(T)));
  float ms = medianMs([&] { fn<<<grid, 256>>>((T)1.0000001, (T)1e-7, steps, sink); });
  CK(cudaFree(sink));
  return 2.0 * grid * 256 * kChains * (double)steps / (ms * 1e6);
}

// ---- launch overhead ------------------------------------------------------

__global__ void empty_kernel() {}

// launchUs is the time per launch of back-to-back empty kernels on one
// stream: what each extra kernel of a sequence costs.
static double launchUs() {
  const int n = 5000;
  float ms = medianMs(
      [&] {
        for (int i = 0; i < n; i++) empty_kernel<<<1, 32>>>();
      },
      5);
  return 1e3 * ms / n;
}

// ---- latencies --------------------------------------------------------------

// chase follows a ring of pointers with one thread: warm loads first, then n
// timed loads, each waiting for the last. CG=true loads with ld.global.cg
// (L2, no L1), otherwise ld.global.ca (L1).
template <bool CG>
__global__ void chase(uint64_t* start, int warm, int n, long long* cycles, uint64_t* sink) {
  uint64_t p = (uint64_t)start;
  for (int i = 0; i < warm; i++) {
    if (CG)
      asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
    else
      asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(p));
  }
  long long t0 = clock64();
#pragma unroll 8
  for (int i = 0; i < n; i++) {
    if (CG)
      asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
    else
      asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(p));
  }
  long long t1 = clock64();
  cycles[0] = t1 - t0;
  sink[0] = p;
}

// ring writes a pointer ring over the 128-byte lines of region (bytes) in a
// random order and returns its start.
static uint64_t* ring(uint64_t* region, size_t bytes) {
  size_t lines = bytes / 128, words = bytes / 8;
  std::vector<size_t> order(lines);
  for (size_t i = 0; i < lines; i++) order[i] = i;
  std::mt19937_64 rng(1);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<uint64_t> h(words, 0);
  for (size_t i = 0; i < lines; i++) h[order[i] * 16] = (uint64_t)(region + order[(i + 1) % lines] * 16);
  CK(cudaMemcpy(region, h.data(), bytes, cudaMemcpyHostToDevice));
  return region + order[0] * 16;
}

template <bool CG>
static double chaseCycles(uint64_t* start, int warm, int n, long long* cyc, uint64_t* sink) {
  chase<CG><<<1, 1>>>(start, warm, n, cyc, sink);
  CK(cudaGetLastError());
  long long c;
  CK(cudaMemcpy(&c, cyc, sizeof c, cudaMemcpyDeviceToHost));
  return (double)c / n;
}

__global__ void smem_chase(unsigned* sink, int n, long long* cycles) {
  __shared__ unsigned s[1024];
  unsigned base = (unsigned)__cvta_generic_to_shared(s);
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) s[i] = base + 4 * ((i + 1) % 1024);
  __syncthreads();
  if (threadIdx.x != 0) return;
  unsigned a = base;
  long long t0 = clock64();
#pragma unroll 8
  for (int i = 0; i < n; i++) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a));
  long long t1 = clock64();
  cycles[0] = t1 - t0;
  sink[0] = a;
}

__global__ void fma_chase(float a, float b, float* sink, int n, long long* cycles) {
  float x = threadIdx.x;
  long long t0 = clock64();
  for (int i = 0; i < n; i += 64) {
#pragma unroll
    for (int k = 0; k < 64; k++) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x) : "f"(a), "f"(b));
  }
  long long t1 = clock64();
  cycles[0] = t1 - t0;
  sink[0] = x;
}

// kernelCycles runs kernel(args..., n, cycles) twice (the first loads its
// code) and returns the cycles of the second per step.
template <typename K, typename... Args>
static double kernelCycles(K kernel, int threads, int n, long long* cyc, Args... args) {
  kernel<<<1, threads>>>(args..., n, cyc);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  kernel<<<1, threads>>>(args..., n, cyc);
  CK(cudaGetLastError());
  long long c;
  CK(cudaMemcpy(&c, cyc, sizeof c, cudaMemcpyDeviceToHost));
  return (double)c / n;
}

// ---- main -------------------------------------------------------------------

int main() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  sms = prop.multiProcessorCount;
  fprintf(stderr, "measure: %s, cc %d.%d, %d SMs, %d MiB L2\n", prop.name, prop.major, prop.minor, sms,
          prop.l2CacheSize >> 20);
  printf("gpu=%s\n", prop.name);

  float4 *a, *b;
  float* sink;
  CK(cudaMalloc(&a, kDRAMBytes));
  CK(cudaMalloc(&b, kDRAMBytes));
  CK(cudaMalloc(&sink, 16));
  CK(cudaMemset(a, 0x3f, kDRAMBytes));
  CK(cudaMemset(b, 0x3f, kDRAMBytes));

  // DRAM: 4 GiB buffers, best of a few loads in flight per thread.
  double rd = std::max(readGBps<4>(a, kDRAMBytes, sink), readGBps<8>(a, kDRAMBytes, sink));
  printf("dram_read_GBps=%.1f\n", rd);
  double wr = std::max(writeGBps<4>(b, kDRAMBytes), writeGBps<8>(b, kDRAMBytes));
  printf("dram_write_GBps=%.1f\n", wr);
  double cpk = std::max(copyGBps<2>(a, b, kDRAMBytes), copyGBps<4>(a, b, kDRAMBytes));
  printf("dram_copy_kernel_GBps=%.1f\n", cpk);
  float msMemcpy = medianMs([&] { CK(cudaMemcpyAsync(b, a, kDRAMBytes, cudaMemcpyDeviceToDevice)); });
  printf("dram_copy_memcpy_GBps=%.1f\n", gbps(2.0 * kDRAMBytes, msMemcpy));

  // L2: buffers of at most half the L2, read many times with L2-only loads.
  double l2 = 0;
  size_t l2best = 0;
  for (size_t mib : {4, 8, 16}) {
    size_t bytes = mib << 20;
    if (bytes * 2 > (size_t)prop.l2CacheSize) continue;
    double g = std::max(l2GBps<4>(a, bytes, sink), l2GBps<8>(a, bytes, sink));
    fprintf(stderr, "l2 read %zu MiB: %.1f GB/s\n", mib, g);
    if (g > l2) l2 = g, l2best = mib;
  }
  printf("l2_GBps=%.1f\nl2_buffer_MiB=%zu\n", l2, l2best);

  printf("smem_GBps=%.1f\n", smemGBps(sink));

  printf("fp32_GFLOPS=%.1f\n", fmaGFLOPS<float>(32768));
  printf("fp64_GFLOPS=%.1f\n", fmaGFLOPS<double>(16384));

  printf("launch_us=%.3f\n", launchUs());

  // Latencies, one thread, SM cycles per dependent access.
  long long* cyc;
  uint64_t* sink64;
  CK(cudaMalloc(&cyc, sizeof(long long)));
  CK(cudaMalloc(&sink64, sizeof(uint64_t)));
  uint64_t* region = (uint64_t*)b;  // b is free again: reuse it for the rings
  const size_t l1Bytes = 4 << 10, l2Bytes = 8 << 20, dramBytes = 64 << 20;
  uint64_t* r1 = ring(region, l1Bytes);
  printf("lat_l1_cycles=%.1f\n", chaseCycles<false>(r1, 2 * (int)(l1Bytes / 128), 8192, cyc, sink64));
  uint64_t* r2 = ring(region + (1 << 20), l2Bytes);  // 8 MiB into b
  printf("lat_l2_cycles=%.1f\n", chaseCycles<true>(r2, (int)(l2Bytes / 128), (int)(l2Bytes / 128), cyc, sink64));
  uint64_t* r3 = ring(region + (64 << 17), dramBytes);  // 64 MiB into b
  // Evict the ring from L2 by reading 1 GiB elsewhere, then visit 16384 of
  // its 524288 lines once each: every load misses L2.
  readGBps<4>(a, 1ULL << 30, sink);
  printf("lat_dram_cycles=%.1f\n", chaseCycles<true>(r3, 0, 16384, cyc, sink64));

  unsigned* sinkU;
  CK(cudaMalloc(&sinkU, sizeof(unsigned)));
  printf("lat_smem_cycles=%.1f\n", kernelCycles(smem_chase, 32, 65536, cyc, sinkU));
  printf("lat_fma_cycles=%.1f\n", kernelCycles(fma_chase, 1, 65536, cyc, 1.0000001f, 1e-7f, sink));
  CK(cudaDeviceSynchronize());
  return 0;
}
