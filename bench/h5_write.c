/* SPDX-License-Identifier: BSD-3-Clause */
/* Writes what dpc.h5 holds for N points (labels int32; rho, delta, gamma
 * float64; parent int64) through h5u_write_1d into a new file and prints
 * the seconds (with --replace: through h5u_out, renamed over FILE, the
 * commit timed apart), so that the write path can be timed apart from any
 * workload (bench/h5-write.sh runs it under each FD_H5_* setting).
 * With --sum, times one thread's Fletcher-32 instead: h5u_fletcher32
 * against HDF5's own (the filter's), over MB megabytes, and checks that
 * they agree.
 *   h5_write FILE [N] [THREADS] [--replace]
 *   h5_write --sum [MB] */
#include "io/h5util.h"
#include "common/clock.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* HDF5's own Fletcher-32 (H5checksum.c), which its filter calls: exported
 * by libhdf5 but declared only in its private headers. */
uint32_t H5_checksum_fletcher32(const void *data, size_t len);

static int sum_bench(size_t mb)
{
    const size_t len = mb << 20;
    uint8_t *buf = malloc(len);
    if (!buf) return 1;
    for (size_t i = 0; i < len; i++) buf[i] = (uint8_t)(i * 2654435761u >> 13);
    uint32_t got[2] = {0, 0};
    double best[2] = {1e30, 1e30};
    for (int rep = 0; rep < 5; rep++)
        for (int k = 0; k < 2; k++) {
            const double t = fd_now();
            got[k] = k ? H5_checksum_fletcher32(buf, len) : h5u_fletcher32(buf, len);
            const double dt = fd_now() - t;
            best[k] = dt < best[k] ? dt : best[k];
        }
    free(buf);
    if (got[0] != got[1]) {
        fprintf(stderr, "h5_write --sum: h5u_fletcher32 %08x, HDF5's %08x\n", got[0], got[1]);
        return 1;
    }
    printf("one thread over %zu MB, best of 5: h5u_fletcher32 %.2f GB/s, HDF5's H5_checksum_fletcher32 %.2f GB/s\n", mb,
           len / best[0] / 1e9, len / best[1] / 1e9);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--sum")) return sum_bench(argc > 2 ? strtoull(argv[2], NULL, 10) : 256);
    if (argc < 2) {
        fprintf(stderr, "usage: h5_write FILE [N] [THREADS] [--replace]\n");
        return 2;
    }
    const size_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000;
    h5u_set_threads(argc > 3 ? atoi(argv[3]) : 1);
    double *rho = malloc(n * 8), *delta = malloc(n * 8), *gamma = malloc(n * 8);
    long long *parent = malloc(n * 8);
    int *labels = malloc(n * 4);
    if (!rho || !delta || !gamma || !parent || !labels) return 1;
    for (size_t i = 0; i < n; i++) {
        rho[i] = (double)(i % 1000);
        delta[i] = 1.0 / (double)(i + 1);
        gamma[i] = rho[i] * delta[i];
        parent[i] = (long long)((i * 7) % n);
        labels[i] = (int)(i % 50);
    }
    /* --replace: as a result is written, under its temporary name and
     * renamed over FILE (h5u_out), the rename timed apart. */
    const int replace = argc > 4 && !strcmp(argv[4], "--replace");
    h5u_out out = H5U_OUT_NONE;
    const double t = fd_now();
    hid_t f = replace ? (h5u_out_create(&out, argv[1]) == FD_OK ? out.file : -1)
                      : H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) return 1;
    fd_status st = h5u_write_1d(f, "labels", H5T_STD_I32LE, H5T_NATIVE_INT32, labels, n);
    if (st == FD_OK) st = h5u_write_1d(f, "rho", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, rho, n);
    if (st == FD_OK) st = h5u_write_1d(f, "delta", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, delta, n);
    if (st == FD_OK) st = h5u_write_1d(f, "parent", H5T_STD_I64LE, H5T_NATIVE_INT64, parent, n);
    if (st == FD_OK) st = h5u_write_1d(f, "gamma", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, gamma, n);
    if (replace) {
        if (st != FD_OK) {
            h5u_out_abort(&out);
            return 1;
        }
        const double w = fd_now();
        if (h5u_out_commit(&out) != FD_OK) return 1;
        printf("%.3f (the commit %.3f)\n", fd_now() - t, fd_now() - w);
        return 0;
    }
    if (H5Fclose(f) < 0 || st != FD_OK) return 1;
    printf("%.3f\n", fd_now() - t);
    return 0;
}
