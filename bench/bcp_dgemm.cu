// bcp's two contraction DGEMMs on one GPU (bench/gpu-bcp-dgemm.sh builds and runs this): the
// calls src/bcp/bcp_gpu.cu makes (outputs column-major, L x R and K x R) against the same
// products with row-major outputs (the way torch calls cuBLAS for Y @ KR), at the block shapes of
// a 200^4 tensor on one GPU (L = K = 40000) and on two (one mode halved), R = 16 and 32.  The
// median of 7 timed calls after one warm-up, CUDA events; the floor is the block read twice at
// 4.3 TB/s (../shared/device/HOPPER.md).  Every CUDA and cuBLAS status is checked.
#include <cublas_v2.h>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include "cuda_timing.cuh"
static cublasHandle_t h;
#define CB(x) do { cublasStatus_t e_ = (x); if (e_ != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #x, (int)e_); exit(1); } } while (0)
int main() {
    CB(cublasCreate(&h));
    const double one = 1, zero = 0;
    long sh[3][2] = {{40000, 40000}, {20000, 40000}, {40000, 20000}};
    for (auto &s : sh) {
        int L = s[0], K = s[1];
        double *y, *kb, *ka, *T0, *T1;
        // Zeros: a DGEMM's time does not depend on the values.
        CK(cudaMalloc(&y, (size_t)L * K * 8)); CK(cudaMemset(y, 0, (size_t)L * K * 8));
        CK(cudaMalloc(&kb, (size_t)K * 64 * 8)); CK(cudaMalloc(&ka, (size_t)L * 64 * 8));
        CK(cudaMemset(kb, 0, (size_t)K * 64 * 8)); CK(cudaMemset(ka, 0, (size_t)L * 64 * 8));
        CK(cudaMalloc(&T0, (size_t)L * 64 * 8)); CK(cudaMalloc(&T1, (size_t)K * 64 * 8));
        for (int R : {16, 32}) {
            // current: T0 (L x R col-major) = op_T(y) op_T(kb)
            float a = tm([&] { CB(cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_T, L, R, K, &one, y, K, kb, R, &zero, T0, L)); });
            // current: T1 (K x R col-major) = y (K x L col) op_T(ka)
            float b = tm([&] { CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, K, R, L, &one, y, K, ka, R, &zero, T1, K)); });
            // row-major T0 (R x L col-major) = kb (R x K col) y (K x L col)
            float c = tm([&] { CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, R, L, K, &one, kb, R, y, K, &zero, T0, R)); });
            // row-major T1 (R x K col-major) = ka (R x L col) op_T(y)
            float d = tm([&] { CB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, R, K, L, &one, ka, R, y, K, &zero, T1, R)); });
            double gb = (double)L * K * 8 / 1e9;
            printf("L=%d K=%d R=%d: now T0 %.3f T1 %.3f = %.3f ms | row-major T0 %.3f T1 %.3f = %.3f ms (floor %.3f)\n", L, K, R, a, b, a + b, c, d, c + d, 2 * gb / 4.3);
        }
        CK(cudaFree(y)); CK(cudaFree(kb)); CK(cudaFree(ka)); CK(cudaFree(T0)); CK(cudaFree(T1));
    }
    CK(cudaGetLastError());
}
