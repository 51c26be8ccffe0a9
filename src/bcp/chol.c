/* SPDX-License-Identifier: BSD-3-Clause */
/* bcp's R x R systems (see chol.h) by LAPACK's Cholesky routines through
 * LAPACKE: dpotrf and dpotri for the covariances, dposv for the fusion's
 * normal equations.  They replaced hand-written loops; on one core of the
 * dev VM (OpenBLAS, one thread) an inverse took 0.72, 2.15, 8.3 and 43.8
 * us at R = 8, 16, 32, 64 against 0.45, 1.60, 8.4 and 53.3 (a one-off
 * timing loop), and a bcp run end to end is the same
 * (bench/results/ab.csv).  With OpenBLAS's threads on, the small calls
 * took 2 to 4 times as long: bcp_lapack_load turns them off (gemm.h). */
#include "chol.h"

#include "bcp_lapack.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

int bcp_spd_inverse(const double *S, uint32_t R, double *inv, double *logdet)
{
    const lapack_int n = (lapack_int)R;
    memcpy(inv, S, (size_t)R * R * sizeof *inv);
    /* A symmetric matrix reads the same in either order, so LAPACK gets it
     * column-major (row-major would cost LAPACKE a transposed copy each
     * way): its upper triangle is the row-major lower one. */
    if (bcp_lapack.dpotrf(LAPACK_COL_MAJOR, 'U', n, inv, n) != 0) return 0;
    double ld = 0;
    for (uint32_t i = 0; i < R; i++) ld += 2 * log(inv[(size_t)i * R + i]);
    if (bcp_lapack.dpotri(LAPACK_COL_MAJOR, 'U', n, inv, n) != 0) return 0;
    /* The row-major lower triangle holds the inverse: mirrored, it is
     * exactly symmetric. */
    for (uint32_t i = 0; i < R; i++)
        for (uint32_t j = i + 1; j < R; j++) inv[(size_t)i * R + j] = inv[(size_t)j * R + i];
    *logdet = ld;
    return 1;
}

int bcp_spd_solve_right(double *S, uint32_t R, const double *B, uint64_t rows, double *X)
{
    if (rows == 0) return 1;
    if (rows > (uint64_t)INT32_MAX) return 0;
    memcpy(X, B, (size_t)rows * R * sizeof *X);
    /* X (rows x R, row-major) is X^T (R x rows) column-major: S X^T = B^T
     * is X = B S^-1 for S symmetric. */
    return bcp_lapack.dposv(LAPACK_COL_MAJOR, 'L', (lapack_int)R, (lapack_int)rows, S, (lapack_int)R, X,
                            (lapack_int)R) == 0;
}
