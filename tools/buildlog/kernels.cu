// Fixture kernels for gpucalc's build-log importer (issue 8): a few kernels
// of different resource footprints whose ptxas -v and cuobjdump
// --dump-resource-usage output is committed under occupancy/testdata/buildlog/.
// The main program prints what cudaFuncGetAttributes reports for each of them,
// so a test can compare the parsed logs with the runtime.
#include <cstdio>
#include <cuda_runtime.h>

// Small elementwise kernel with C linkage: an unmangled name.
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// Register-heavy: 120 accumulators per thread kept live across the loop.
__global__ void poly_eval(const float* __restrict__ x, float* __restrict__ y, int n, int steps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc[120];
#pragma unroll
  for (int k = 0; k < 120; k++) acc[k] = x[i] * (k + 1);
  for (int s = 0; s < steps; s++) {
#pragma unroll
    for (int k = 0; k < 120; k++) acc[k] = fmaf(acc[k], acc[(k + 1) % 120], 0.5f * k);
  }
  float sum = 0;
#pragma unroll
  for (int k = 0; k < 120; k++) sum += acc[k];
  y[i] = sum;
}

// Static shared memory (a padded 32x33 tile, 4224 bytes) and launch bounds.
__global__ void __launch_bounds__(256, 2) transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x;
  int y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < rows && y + j < cols) out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

// Templated block reduction: static shared memory sized by the template
// arguments, so the mangled names need demangling to be read.
template <typename T, int Block>
__global__ void block_reduce(const T* __restrict__ in, T* __restrict__ out, int n) {
  __shared__ T buf[Block];
  T v = 0;
  for (int i = blockIdx.x * Block + threadIdx.x; i < n; i += gridDim.x * Block) v += in[i];
  buf[threadIdx.x] = v;
  __syncthreads();
  for (int s = Block / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = buf[0];
}
template __global__ void block_reduce<float, 128>(const float*, float*, int);
template __global__ void block_reduce<double, 512>(const double*, double*, int);

// Dynamic shared memory only: ptxas reports 0 bytes smem for it.
__global__ void scale_dynamic(float* data, int n, float s) {
  extern __shared__ float stage[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  stage[threadIdx.x] = i < n ? data[i] : 0.f;
  __syncthreads();
  if (i < n) data[i] = stage[blockDim.x - 1 - threadIdx.x] * s;
}

// A local array indexed at run time: a stack frame without spills.
__global__ void histogram_local(const int* __restrict__ keys, int* __restrict__ out, int n) {
  int counts[64];
  for (int k = 0; k < 64; k++) counts[k] = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) counts[keys[i] & 63]++;
  for (int k = 0; k < 64; k++) atomicAdd(&out[k], counts[k]);
}

// Defined in spill.cu, which is compiled with -maxrregcount=32.
const void* spill_kernel();

struct entry {
  const char* label;
  const void* fn;
};

int main() {
  entry ks[] = {
      {"saxpy", (const void*)saxpy},
      {"poly_eval", (const void*)poly_eval},
      {"transpose_tiled", (const void*)transpose_tiled},
      {"block_reduce<float,128>", (const void*)block_reduce<float, 128>},
      {"block_reduce<double,512>", (const void*)block_reduce<double, 512>},
      {"scale_dynamic", (const void*)scale_dynamic},
      {"histogram_local", (const void*)histogram_local},
      {"spill_heavy", spill_kernel()},
  };
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  printf("# %s, cc %d.%d, cudaFuncGetAttributes\n", prop.name, prop.major, prop.minor);
  printf("kernel,numRegs,sharedSizeBytes,localSizeBytes,maxThreadsPerBlock,constSizeBytes,maxDynamicSharedSizeBytes,ptxVersion,binaryVersion\n");
  int rc = 0;
  for (const entry& k : ks) {
    cudaFuncAttributes a;
    cudaError_t err = cudaFuncGetAttributes(&a, k.fn);
    if (err != cudaSuccess) {
      fprintf(stderr, "%s: %s\n", k.label, cudaGetErrorString(err));
      rc = 1;
      continue;
    }
    // The mangled name, as ptxas and cuobjdump print it.
    const char* name = nullptr;
    if (cudaFuncGetName(&name, k.fn) != cudaSuccess || name == nullptr) {
      fprintf(stderr, "%s: cudaFuncGetName failed\n", k.label);
      name = k.label;
      rc = 1;
    }
    printf("%s,%d,%zu,%zu,%d,%zu,%d,%d,%d\n", name, a.numRegs, a.sharedSizeBytes, a.localSizeBytes,
           a.maxThreadsPerBlock, a.constSizeBytes, a.maxDynamicSharedSizeBytes, a.ptxVersion, a.binaryVersion);
  }
  return rc;
}
