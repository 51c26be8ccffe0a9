// bcp's per-mode covariance on the GPU (bench/gpu-bcp-sigma.sh builds and runs this): the
// one-block kernel of src/bcp/bcp_sigma.cuh (k_sigma) against cuSOLVER's Cholesky routines
// with the kernels a sweep would need around them (tau Psi + diag(lambda) formed, dpotrf,
// ln det from the factor's diagonal, dpotri, the triangle mirrored): the device time of one
// mode's step, 200 in a row on one stream (as a sweep queues them, no host between), the
// median of 7 such runs by CUDA events, at R = 8, 16, 32, 64 for order 4.  Each also checks
// that the two agree (largest difference relative to the largest entry of Sigma, and of the
// log-determinant).  Every CUDA and cuSOLVER status is checked.
#include "../src/bcp/bcp_sigma.cuh"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include "cuda_timing.cuh"
#include <cusolverDn.h>
#include <vector>
#define CS(x) do { cusolverStatus_t e_ = (x); if (e_ != CUSOLVER_STATUS_SUCCESS) { fprintf(stderr, "%s:%d: %s: cuSOLVER status %d\n", __FILE__, __LINE__, #x, (int)e_); exit(1); } } while (0)

__global__ void k_psi(const double *EAA, uint32_t N, uint32_t n, uint32_t R, double tau, const double *lambda, double *P)
{
    const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= R * R) return;
    double p = 1;
    for (uint32_t k = 0; k < N; k++)
        if (k != n) p = __dmul_rn(p, EAA[(uint64_t)k * R * R + e]);
    p = __dmul_rn(p, tau);
    if (e / R == e % R) p = __dadd_rn(p, lambda[e / R]);
    P[e] = p;
}
__global__ void k_logdet(const double *F, uint32_t R, double *logdet)
{
    double ld = 0;
    for (uint32_t i = 0; i < R; i++) ld += 2 * log(F[i * R + i]);
    *logdet = -ld;
}
__global__ void k_mirror(double *S, uint32_t R)  // column-major 'U' of dpotri = row-major lower
{
    const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= R * R) return;
    const uint32_t p = e / R, q = e % R;
    if (q > p) S[p * R + q] = S[q * R + p];
}


int main()
{
    cusolverDnHandle_t h;
    CS(cusolverDnCreate(&h));
    const uint32_t N = 4, n = 1, steps = 200;
    const double tau = 3.7;
    srand(7);
    for (uint32_t R : {8u, 16u, 32u, 64u}) {
        // E[A^T A] of each mode: B^T B + I for random B (R + 5) x R, so tau Psi + diag(lambda) is positive definite.
        std::vector<double> eaa(N * R * R), lam(R);
        for (uint32_t k = 0; k < N; k++) {
            std::vector<double> B((R + 5) * R);
            for (double &x : B) x = rand() / (double)RAND_MAX - 0.5;
            for (uint32_t p = 0; p < R; p++)
                for (uint32_t q = 0; q < R; q++) {
                    double s = p == q;
                    for (uint32_t i = 0; i < R + 5; i++) s += B[i * R + p] * B[i * R + q];
                    eaa[k * R * R + p * R + q] = s;
                }
        }
        for (double &x : lam) x = 0.5 + rand() / (double)RAND_MAX;
        double *dE, *dL, *S1, *S2, *ld, *bad, *work;
        int *info, lwork = 0;
        CK(cudaMalloc(&dE, eaa.size() * 8)); CK(cudaMalloc(&dL, R * 8));
        CK(cudaMalloc(&S1, R * R * 8)); CK(cudaMalloc(&S2, R * R * 8)); CK(cudaMalloc(&ld, 2 * 8));
        CK(cudaMalloc(&bad, 8)); CK(cudaMalloc(&info, sizeof(int)));
        CK(cudaMemcpy(dE, eaa.data(), eaa.size() * 8, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dL, lam.data(), R * 8, cudaMemcpyHostToDevice));
        CK(cudaMemset(bad, 0, 8));
        int lw2 = 0;
        CS(cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_UPPER, (int)R, S2, (int)R, &lwork));
        CS(cusolverDnDpotri_bufferSize(h, CUBLAS_FILL_MODE_UPPER, (int)R, S2, (int)R, &lw2));
        if (lw2 > lwork) lwork = lw2;
        CK(cudaMalloc(&work, (size_t)lwork * 8));
        auto kernel = [&] {
            for (uint32_t s = 0; s < steps; s++)
                k_sigma_launch(0, dE, N, n, R, tau, dL, S1, ld, bad);
            CK(cudaGetLastError());
        };
        auto solver = [&] {
            for (uint32_t s = 0; s < steps; s++) {
                k_psi<<<(R * R + 255) / 256, 256>>>(dE, N, n, R, tau, dL, S2);
                CS(cusolverDnDpotrf(h, CUBLAS_FILL_MODE_UPPER, (int)R, S2, (int)R, work, lwork, info));
                k_logdet<<<1, 1>>>(S2, R, ld + 1);
                CS(cusolverDnDpotri(h, CUBLAS_FILL_MODE_UPPER, (int)R, S2, (int)R, work, lwork, info));
                k_mirror<<<(R * R + 255) / 256, 256>>>(S2, R);
            }
            CK(cudaGetLastError());
        };
        const float tk = tm(kernel), ts = tm(solver);
        std::vector<double> a(R * R), b(R * R);
        double l[2], fl;
        int inf;
        CK(cudaMemcpy(a.data(), S1, R * R * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b.data(), S2, R * R * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(l, ld, 16, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&fl, bad, 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&inf, info, sizeof inf, cudaMemcpyDeviceToHost));
        double big = 0, diff = 0;
        for (uint32_t e = 0; e < R * R; e++) { big = fmax(big, fabs(b[e])); diff = fmax(diff, fabs(a[e] - b[e])); }
        printf("R=%u: k_sigma %.2f us a mode, cuSOLVER %.2f us (%.1fx); Sigma differs by %.2e of its largest entry, "
               "ln det by %.2e; flag %g, info %d\n", R, 1e3 * tk / steps, 1e3 * ts / steps, ts / tk, diff / big,
               fabs(l[0] - l[1]), fl, inf);
        cudaFree(dE); cudaFree(dL); cudaFree(S1); cudaFree(S2); cudaFree(ld); cudaFree(bad); cudaFree(info); cudaFree(work);
    }
    CS(cusolverDnDestroy(h));
    return 0;
}
