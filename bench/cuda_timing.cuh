// What bench/'s stand-alone CUDA programs share: a checked CUDA call (an
// error prints file, line and call, and exits 1) and the median of 7
// timed runs of a callable after one warm-up, by CUDA events (ms).
#ifndef FD_BENCH_CUDA_TIMING_CUH
#define FD_BENCH_CUDA_TIMING_CUH

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

template <class F> float tm(F f) {
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    f(); CK(cudaDeviceSynchronize());
    float t[7];
    for (int i = 0; i < 7; i++) { CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b)); CK(cudaEventElapsedTime(&t[i], a, b)); }
    for (int i = 0; i < 7; i++) for (int j = i + 1; j < 7; j++) if (t[j] < t[i]) { float x = t[i]; t[i] = t[j]; t[j] = x; }
    CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
    return t[3];
}

#endif
