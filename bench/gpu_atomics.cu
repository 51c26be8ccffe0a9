/* How fast can one multiprocessor count into a shared-memory histogram?
 * The Spearman kernel's histogram path spends one shared-memory atomic a
 * pair (docs/performance.md); this measures, away from the kernel, the
 * ways a block of 256 threads (two blocks a multiprocessor, as the kernel
 * runs) can count 32 values a thread:
 *   inc        red.shared.add 1 at bin b of 2000 (what the kernel does;
 *              the compiler emits ATOMS.POPC.INC)
 *   add        the same with an addend the compiler cannot see is 1
 *              (ATOMS.ADD)
 *   inc-lane   red.shared.add 1 at a lane's own copy of the bin (word
 *              b 32 + lane: one bank a lane, no conflicts; b mod 320)
 *   add-lane   ATOMS.ADD at a lane's own copy
 *   rmw-lane   load, add, store (no atomic) at the lane's own copy in the
 *              warp's own histogram (b mod 40)
 *   inc-same   red.shared.add 1, all lanes of a warp at one bin
 *   inc+ld     inc, and a 4-byte load (no conflicts) after every 4
 *              increments, about the kernel's mix: do loads add to the
 *              atomics' time?  (ld.volatile: ptxas drops or merges plain
 *              loads whose values nothing needs)
 *   none       the loop without the increments (its overhead, not a rate)
 * The bins follow a bell of standard deviation 147 bins around 1000 (sum
 * of four random bytes), near the 186 of the kernel's benchmark matrix.
 * Every count is checked: the histogram's total must be the number of
 * increments.  Prints one CSV line a mode: mode, increments, median
 * seconds of 5, increments per second, increments per multiprocessor per
 * clock (at the device's reported clock). */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(call)                                                                                                  \
    do {                                                                                                          \
        cudaError_t e_ = (call);                                                                                  \
        if (e_ != cudaSuccess) {                                                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));               \
            exit(1);                                                                                              \
        }                                                                                                         \
    } while (0)

enum { NONE, INC, ADD, INC_LANE, ADD_LANE, RMW_LANE, INC_SAME, INC_LD, NMODES };
static const char *const mode_name[NMODES] = {"none",     "inc",     "add",     "inc-lane",
                                              "add-lane", "rmw-lane", "inc-same", "inc+ld"};

#define THREADS 256
#define PER 32
#define BINS 2000
#define LANE_BINS 320 /* 320 x 32 words = 40 KB */
#define WARP_BINS 40  /* 8 warps x 40 x 32 words = 40 KB */

template <int MODE> __host__ __device__ constexpr int words()
{
    return MODE == INC_LANE || MODE == ADD_LANE ? LANE_BINS * 32 : MODE == RMW_LANE ? 8 * WARP_BINS * 32 : BINS;
}

template <int MODE>
__global__ void __launch_bounds__(THREADS, 2) k_count(int iters, uint32_t seed, uint32_t one,
                                                      unsigned long long *total)
{
    extern __shared__ uint32_t h[];
    const uint32_t t = threadIdx.x, lane = t & 31u, warp = t >> 5;
    for (int i = t; i < words<MODE>(); i += THREADS)
        h[i] = 0;
    __syncthreads();

    /* Odd iterations count one bin up (mod the histogram), so that the
     * addresses are not the same each time round. */
    constexpr uint32_t range = MODE == INC_LANE || MODE == ADD_LANE ? LANE_BINS : MODE == RMW_LANE ? WARP_BINS : BINS;
    uint32_t x = seed ^ ((blockIdx.x * THREADS + t) * 0x9E3779B9u), addr[2][PER];
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(h);
#pragma unroll
    for (int k = 0; k < PER; k++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        uint32_t b = 1000u - 510u + (x & 255u) + ((x >> 8) & 255u) + ((x >> 16) & 255u) + (x >> 24);
        if (MODE == INC_SAME) b = __shfl_sync(0xffffffffu, b, 0);
#pragma unroll
        for (int odd = 0; odd < 2; odd++) {
            const uint32_t c = (b + odd) % range;
            uint32_t w = c;
            if (MODE == INC_LANE || MODE == ADD_LANE) w = c * 32 + lane;
            else if (MODE == RMW_LANE) w = (warp * WARP_BINS + c) * 32 + lane;
            addr[odd][k] = base + 4 * w;
        }
    }
    uint32_t sink = 0;
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int k = 0; k < PER; k++) {
            const uint32_t a = it & 1 ? addr[1][k] : addr[0][k];
            if (MODE == INC_LD && (k & 3) == 3) {
                uint32_t v;
                asm volatile("ld.volatile.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(base + 4u * (lane + 32u * (k >> 2))));
                sink += v;
            }
            if (MODE == NONE) sink += a;
            else if (MODE == INC || MODE == INC_LANE || MODE == INC_SAME || MODE == INC_LD)
                asm volatile("red.shared.add.u32 [%0], 1;\n" ::"r"(a));
            else if (MODE == ADD || MODE == ADD_LANE)
                asm volatile("red.shared.add.u32 [%0], %1;\n" ::"r"(a), "r"(one));
            else {
                uint32_t v;
                asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(a));
                asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(a), "r"(v + one));
            }
        }
    }
    __syncthreads();
    unsigned long long n = 0;
    for (int i = t; i < words<MODE>(); i += THREADS)
        n += h[i];
    if (MODE == NONE) n = (unsigned long long)iters * PER;
    atomicAdd(total, n);
    atomicAdd(total + 1, (unsigned long long)sink); /* read, so that the compiler keeps the loads */
}

template <int MODE> static void run(int sms, int clock_khz, int iters)
{
    const int blocks = 2 * sms;
    const size_t bytes = (size_t)words<MODE>() * 4;
    CK(cudaFuncSetAttribute(k_count<MODE>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    unsigned long long *d_total, total = 0;
    CK(cudaMalloc(&d_total, 2 * sizeof *d_total));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const unsigned long long want = (unsigned long long)blocks * THREADS * PER * (unsigned long long)iters;
    float ms[5];
    for (int rep = -1; rep < 5; rep++) { /* rep -1: warm-up */
        CK(cudaMemset(d_total, 0, 2 * sizeof *d_total));
        CK(cudaEventRecord(e0));
        k_count<MODE><<<blocks, THREADS, bytes>>>(iters, 0x2545F491u + (uint32_t)rep, 1u, d_total);
        CK(cudaGetLastError());
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaMemcpy(&total, d_total, sizeof total, cudaMemcpyDeviceToHost));
        if (total != want) {
            fprintf(stderr, "gpu_atomics: %s counted %llu, want %llu\n", mode_name[MODE], total, want);
            exit(1);
        }
        if (rep >= 0) CK(cudaEventElapsedTime(&ms[rep], e0, e1));
    }
    for (int i = 0; i < 5; i++) /* median */
        for (int j = i + 1; j < 5; j++)
            if (ms[j] < ms[i]) {
                const float s = ms[i];
                ms[i] = ms[j], ms[j] = s;
            }
    const double sec = ms[2] / 1e3, rate = (double)want / sec;
    printf("%s,%llu,%.6f,%.4g,%.3f\n", mode_name[MODE], want, sec, rate, rate / sms / (clock_khz * 1e3));
    CK(cudaFree(d_total));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
}

int main(int argc, char **argv)
{
    const int iters = argc > 1 ? atoi(argv[1]) : 20000;
    if (iters <= 0) {
        fprintf(stderr, "usage: gpu_atomics [iterations > 0]\n");
        return 2;
    }
    int dev = 0, sms = 0, clock_khz = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
    printf("mode,increments,seconds,per_second,per_sm_clock\n");
    run<NONE>(sms, clock_khz, iters);
    run<INC>(sms, clock_khz, iters);
    run<ADD>(sms, clock_khz, iters);
    run<INC_LANE>(sms, clock_khz, iters);
    run<ADD_LANE>(sms, clock_khz, iters);
    run<RMW_LANE>(sms, clock_khz, iters);
    run<INC_SAME>(sms, clock_khz, iters);
    run<INC_LD>(sms, clock_khz, iters);
    return 0;
}
