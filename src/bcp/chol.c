/* The Cholesky factor (see chol.h): row by row, each entry read from S
 * before it is written, so that L may be S. */
#include "chol.h"

#include "../common/dispatch.h"

#include <math.h>
#include <stddef.h>

int bcp_cholesky(const double *S, uint32_t R, double *L)
{
    for (uint32_t i = 0; i < R; i++)
        for (uint32_t j = 0; j <= i; j++) {
            double s = S[i * R + j];
            for (uint32_t k = 0; k < j; k++) s -= L[i * R + k] * L[j * R + k];
            if (i == j) {
                if (!(s > 0)) return 0;
                L[i * R + i] = sqrt(s);
            } else {
                L[i * R + j] = s / L[j * R + j];
            }
        }
    return 1;
}

/* Every inner loop below runs along a row with a scalar from outside it
 * (an axpy), so it vectorises.  The textbook order (a column of the
 * inverse at a time, each entry a dot product) is a chain of dependent
 * multiply-adds, which was the larger part of bcp's host work in a sweep
 * on one GPU at R = 32 (docs/performance.md). */
FD_HOT int bcp_spd_inverse(const double *S, uint32_t R, double *work, double *inv, double *logdet)
{
    double *const U = work, *const V = work + (size_t)R * R;
    /* S = U^T U, U upper triangular, by outer products: row k of U is
     * final once step k has scaled it, and the rows below are updated by
     * it. */
    for (uint32_t i = 0; i < R; i++)
        for (uint32_t j = 0; j < R; j++) U[i * R + j] = j >= i ? S[i * R + j] : 0;
    double ld = 0;
    for (uint32_t k = 0; k < R; k++) {
        double *const uk = U + k * R;
        if (!(uk[k] > 0)) return 0;
        const double d = sqrt(uk[k]);
        ld += 2 * log(d);
        for (uint32_t j = k; j < R; j++) uk[j] /= d;
        for (uint32_t i = k + 1; i < R; i++) {
            const double u = uk[i];
            double *const ui = U + i * R;
            for (uint32_t j = i; j < R; j++) ui[j] -= u * uk[j];
        }
    }
    /* V = U^-T, lower triangular, a row at a time by forward substitution
     * (U^T V = I): row i less U[k][i] times row k for k < i, over U[i][i]. */
    for (uint32_t i = 0; i < R; i++) {
        double *const vi = V + i * R;
        for (uint32_t j = 0; j < R; j++) vi[j] = j == i;
        for (uint32_t k = 0; k < i; k++) {
            const double u = U[k * R + i], *const vk = V + k * R;
            for (uint32_t j = 0; j <= k; j++) vi[j] -= u * vk[j];
        }
        const double d = U[i * R + i];
        for (uint32_t j = 0; j <= i; j++) vi[j] /= d;
    }
    /* S^-1 = V^T V, the sum of the outer products of V's rows, in order:
     * entry (p, q) and (q, p) add the same products in the same order, so
     * the inverse is exactly symmetric. */
    for (uint32_t e = 0; e < R * R; e++) inv[e] = 0;
    for (uint32_t k = 0; k < R; k++) {
        const double *const vk = V + k * R;
        for (uint32_t p = 0; p <= k; p++) {
            const double v = vk[p];
            double *const ip = inv + p * R;
            for (uint32_t q = 0; q <= k; q++) ip[q] += v * vk[q];
        }
    }
    *logdet = ld;
    return 1;
}
