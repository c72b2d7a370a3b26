// Compiled with -maxrregcount=32 by make-logs.sh: far more live values than
// 32 registers hold, so ptxas spills to local memory.
#include <cuda_runtime.h>

__global__ void spill_heavy(const float* __restrict__ x, float* __restrict__ y, int n, int steps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc[40];
#pragma unroll
  for (int k = 0; k < 40; k++) acc[k] = x[(i + k) % n];
  for (int s = 0; s < steps; s++) {
#pragma unroll
    for (int k = 0; k < 40; k++) acc[k] = fmaf(acc[k], acc[(k + 7) % 40], acc[(k + 13) % 40]);
  }
  float sum = 0;
#pragma unroll
  for (int k = 0; k < 40; k++) sum += acc[k] * (k + 1);
  y[i] = sum;
}

const void* spill_kernel() { return (const void*)spill_heavy; }
