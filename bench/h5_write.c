/* SPDX-License-Identifier: BSD-3-Clause */
/* Writes what dpc.h5 holds for N points (labels int32; rho, delta, gamma
 * float64; parent int64) through h5u_write_1d into a new file and prints
 * the seconds, so that the write path can be timed apart from any
 * workload (bench/h5-write.sh runs it under each FD_H5_* setting).
 *   h5_write FILE [N] [THREADS] */
#include "io/h5util.h"
#include "common/clock.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: h5_write FILE [N] [THREADS]\n");
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
    const double t = fd_now();
    hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) return 1;
    fd_status st = h5u_write_1d(f, "labels", H5T_STD_I32LE, H5T_NATIVE_INT32, labels, n);
    if (st == FD_OK) st = h5u_write_1d(f, "rho", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, rho, n);
    if (st == FD_OK) st = h5u_write_1d(f, "delta", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, delta, n);
    if (st == FD_OK) st = h5u_write_1d(f, "parent", H5T_STD_I64LE, H5T_NATIVE_INT64, parent, n);
    if (st == FD_OK) st = h5u_write_1d(f, "gamma", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, gamma, n);
    if (H5Fclose(f) < 0 || st != FD_OK) return 1;
    printf("%.3f\n", fd_now() - t);
    return 0;
}
