/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_cuda_upload (src/cuda/upload.c) against the bytes it was given:
 * sizes around its pieces (8 MiB) and its ring of three, both settings of
 * FD_GPU_UPLOAD, the device's copy read back and compared.  Exit 77
 * (skipped) when the machine has no GPU. */
#include "common/clock.h"
#include "cuda/fdcuda.h"
#include "testutil.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((uint64_t)1 << 20)

int main(void)
{
    if (fd_cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    const uint64_t sizes[] = {1, 4096, 16 * MIB - 1, 16 * MIB, 16 * MIB + 1, 24 * MIB + 5, 40 * MIB, 97 * MIB + 3};
    const uint64_t most = 97 * MIB + 3 + 2; /* the largest, from offset 2 */
    unsigned char *src = malloc(most), *back = malloc(most), *dev = NULL;
    CHECK(src && back && cudaMalloc((void **)&dev, most) == cudaSuccess, "memory");
    if (!src || !back || !dev) return t_report();
    fd_rng r = {11};
    for (uint64_t i = 0; i < most; i += 8) {
        uint64_t v = fd_rng_next(&r);
        memcpy(src + i, &v, most - i < 8 ? most - i : 8);
    }
    for (int mode = 0; mode < 2; mode++) {
        setenv("FD_GPU_UPLOAD", mode ? "pageable" : "staged", 1);
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            const uint64_t n = sizes[k], at = k % 3; /* unaligned sources too */
            cudaMemset(dev, 0x5a, n);
            fd_status st = fd_cuda_upload(dev, src + at, n);
            CHECK(st == FD_OK, "%s, %llu bytes: %s", getenv("FD_GPU_UPLOAD"), (unsigned long long)n, fd_errmsg());
            CHECK(cudaMemcpy(back, dev, n, cudaMemcpyDeviceToHost) == cudaSuccess, "read back");
            CHECK(!memcmp(back, src + at, n), "%s, %llu bytes from offset %llu: the device's copy differs",
                  getenv("FD_GPU_UPLOAD"), (unsigned long long)n, (unsigned long long)at);
        }
    }
    /* On a thread of its own (bcp's block beside its warm-up). */
    setenv("FD_GPU_UPLOAD", "staged", 1);
    const uint64_t n = 40 * MIB + 3;
    fd_upload *u = NULL;
    cudaMemset(dev, 0x5a, n);
    fd_status st = fd_cuda_upload_start(&u, 0, dev, src + 1, n);
    if (st == FD_OK) st = fd_cuda_upload_finish(&u);
    CHECK(st == FD_OK && !u, "upload_start/finish: %s", fd_errmsg());
    CHECK(cudaMemcpy(back, dev, n, cudaMemcpyDeviceToHost) == cudaSuccess && !memcmp(back, src + 1, n),
          "upload_start/finish: the device's copy differs");
    CHECK(fd_cuda_upload_finish(&u) == FD_OK, "finish of none");
    cudaFree(dev);
    free(src);
    free(back);
    return t_report();
}
