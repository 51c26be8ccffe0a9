/* SPDX-License-Identifier: BSD-3-Clause */
#include "check.cuh"
#include "fdcuda.h"
#include "../common/clock.h"
#include "../common/env.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* FD_GPU_VERBOSE: how long the driver's start (the first call) and the
 * context took, which come before and beside the read. */
static void say_time(const char *what, double t0)
{
    if (getenv("FD_GPU_VERBOSE")) fprintf(stderr, "gpu: %s in %.1f ms\n", what, (fd_now() - t0) * 1e3);
}

extern "C" void fd_cuda_say_time(const char *what, double t0) { say_time(what, t0); }

extern "C" int fd_cuda_device_count(void)
{
    int n = 0;
    const double t0 = fd_now();
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* no driver: clear the sticky error, report none */
        return 0;
    }
    say_time("the devices counted", t0);
    return n;
}

extern "C" int fd_cuda_present(void)
{
    /* The driver's control node exists wherever its kernel module is
     * loaded; CUDA_VISIBLE_DEVICES empty or starting with an invalid
     * index (-1) hides every device. */
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    if (v && (!*v || *v == '-')) return 0;
    return access("/dev/nvidiactl", F_OK) == 0;
}

extern "C" fd_status fd_cuda_open(int device)
{
    fd_status st = FD_OK;
    CUDA_CHECK_GOTO(cudaSetDevice(device), st, done);
    CUDA_CHECK_GOTO(cudaFree(0), st, done);
done:
    return st;
}

extern "C" void fd_cuda_warm(int device)
{
    const double t0 = fd_now();
    if (cudaSetDevice(device) != cudaSuccess || cudaFree(0) != cudaSuccess) cudaGetLastError();
    say_time("the context made (beside the read)", t0);
}

extern "C" void fd_cuda_release(int device)
{
    const double t0 = fd_now();
    if (cudaSetDevice(device) != cudaSuccess || cudaDeviceReset() != cudaSuccess) cudaGetLastError();
    say_time("the device released (beside the output)", t0);
}

/* One workload runs in a process, and its backend sets this before its
 * device work starts. */
static const char *oom_hint = "use a GPU with more memory, or --backend cpu";

extern "C" void fd_cuda_set_oom_hint(const char *hint) { oom_hint = hint; }

extern "C" fd_status fd_cuda_alloc(void **p, size_t bytes, const char *what)
{
    /* FD_GPU_MEM_LIMIT: a smaller GPU, for the tests of running out */
    uint64_t limit;
    *p = NULL;
    FD_TRY(fd_env_count("FD_GPU_MEM_LIMIT", 1, UINT64_MAX, 0, "bytes", &limit));
    cudaError_t rc = limit && bytes > limit ? cudaErrorMemoryAllocation : cudaMalloc(p, bytes ? bytes : 8);
    if (rc != cudaSuccess) {
        cudaGetLastError();
        *p = NULL;
        return fd_fail(FD_ERR_NOMEM, "out of GPU memory for %s (%.1f MiB more): %s; %s", what,
                       (double)bytes / 1048576.0, cudaGetErrorString(rc), oom_hint);
    }
    return FD_OK;
}
