/* SPDX-License-Identifier: BSD-3-Clause */
/* Fusing sub-tensor factors into full ones (see bcp_fuse.h).  With P_m(k)
 * = U_k(m)^T A_k(m) and Q_m(k) = A_k(m)^T A_k(m), the objective's
 * gradient in block j of A(n) vanishes at
 *   A(n)_j = [sum over k with k_n = j of U_k(n) Hadamard_{m != n} P_m(k)]
 *            [sum over the same k of Hadamard_{m != n} Q_m(k)]^-1,
 * the update of one ALS step; the objective is
 *   sum over k of ||[[U_k]]||^2 - 2 sum(Hadamard_m P_m(k)) + sum(Hadamard_m Q_m(k)). */
#include "bcp_fuse.h"
#include "bcp_lapack.h"
#include "chol.h"

#include "../common/clock.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t grid_count(uint32_t order, const uint64_t *grid)
{
    uint64_t p = 1;
    for (uint32_t n = 0; n < order; n++) p *= grid[n];
    return p;
}

uint64_t bcp_fuse_offset(uint32_t order, const uint64_t *dims, const uint64_t *grid, uint32_t R, uint64_t k)
{
    uint64_t off = 0;
    for (uint64_t q = 0; q < k; q++) {
        uint64_t lo[BCP_MAX_ORDER], cnt[BCP_MAX_ORDER];
        bcp_grid_block(q, order, dims, grid, lo, cnt);
        for (uint32_t n = 0; n < order; n++) off += cnt[n] * R;
    }
    return off;
}

/* X^T Y for X, Y rows x R (row-major). */
static void gram(const double *X, const double *Y, uint64_t rows, uint32_t R, double *G)
{
    for (uint32_t a = 0; a < R; a++)
        for (uint32_t b = 0; b < R; b++) {
            double s = 0;
            for (uint64_t i = 0; i < rows; i++) s += X[i * R + a] * Y[i * R + b];
            G[a * R + b] = s;
        }
}

/* Sub-tensor k's P_m = U_k(m)^T A_k(m) and Q_m = A_k(m)^T A_k(m), every
 * mode m (R x R each, one after the other); U: its factors, cnt and lo:
 * its blocks. */
static void products(uint32_t order, uint32_t R, const double *U, const uint64_t *cnt, const uint64_t *lo,
                     double *const *A, double *P, double *Q)
{
    for (uint32_t m = 0; m < order; m++) {
        const double *Am = A[m] + lo[m] * R;
        gram(U, Am, cnt[m], R, P + (size_t)m * R * R);
        gram(Am, Am, cnt[m], R, Q + (size_t)m * R * R);
        U += cnt[m] * R;
    }
}

/* The start of the fusion, from the sub-factors themselves: block 0 of
 * every mode from sub-tensor 0; block j of mode n from the sub-tensor at
 * j along n and 0 along the others, which shares its other modes' blocks
 * with sub-tensor 0: its components matched to sub-tensor 0's by the
 * product over those modes of the cosines (greedily, best first), and
 * scaled so that those modes agree with sub-tensor 0's (the scale of
 * U_k(m) on U_0(m) moves into mode n).  Starting from random factors
 * instead, the fusion of a 2 x 2 x 2 x 2 grid stalled at a fit of 0.68
 * where the tensor's was 0.90. */
static void aligned_start(uint32_t order, const uint64_t *dims, const uint64_t *grid, uint32_t R, const double *sub,
                          const uint64_t *off, const uint64_t *cnt, double **A)
{
    const double *U0[BCP_MAX_ORDER];
    const double *u = sub + off[0];
    for (uint32_t m = 0; m < order; m++) {
        U0[m] = u;
        memcpy(A[m], u, cnt[m] * R * sizeof *u); /* block 0 of each mode starts at row 0 */
        u += cnt[m] * R;
    }
    for (uint32_t n = 0; n < order; n++) {
        uint64_t stride = 1; /* sub-tensor index step along mode n (C order) */
        for (uint32_t m = n + 1; m < order; m++) stride *= grid[m];
        uint64_t row = cnt[n];
        for (uint64_t j = 1; j < grid[n]; j++) {
            const uint64_t k = j * stride;
            const double *Uk[BCP_MAX_ORDER];
            u = sub + off[k];
            for (uint32_t m = 0; m < order; m++) {
                Uk[m] = u;
                u += cnt[k * order + m] * R;
            }
            const uint64_t rows = cnt[k * order + n];
            int used_a[256] = {0}, used_b[256] = {0};
            for (uint32_t t = 0; t < R; t++) {
                /* The best remaining pair (a of sub-tensor 0, b of k). */
                double best = -1;
                uint32_t ba = 0, bb = 0;
                for (uint32_t a = 0; a < R; a++)
                    for (uint32_t b = 0; b < R && !used_a[a]; b++) {
                        if (used_b[b]) continue;
                        double c = 1;
                        for (uint32_t m = 0; m < order; m++) {
                            if (m == n) continue;
                            double d = 0, na = 0, nb = 0;
                            for (uint64_t i = 0; i < cnt[m]; i++) {
                                d += U0[m][i * R + a] * Uk[m][i * R + b];
                                na += U0[m][i * R + a] * U0[m][i * R + a];
                                nb += Uk[m][i * R + b] * Uk[m][i * R + b];
                            }
                            c *= na > 0 && nb > 0 ? fabs(d) / sqrt(na * nb) : 0;
                        }
                        if (c > best) best = c, ba = a, bb = b;
                    }
                used_a[ba] = used_b[bb] = 1;
                double scale = 1;
                for (uint32_t m = 0; m < order; m++) {
                    if (m == n) continue;
                    double d = 0, na = 0;
                    for (uint64_t i = 0; i < cnt[m]; i++) {
                        d += U0[m][i * R + ba] * Uk[m][i * R + bb];
                        na += U0[m][i * R + ba] * U0[m][i * R + ba];
                    }
                    scale *= na > 0 ? d / na : 0;
                }
                for (uint64_t i = 0; i < rows; i++) A[n][(row + i) * R + ba] = Uk[n][i * R + bb] * scale;
            }
            row += rows;
        }
    }
    (void)dims;
}

fd_status bcp_fuse(uint32_t order, const uint64_t *dims, const uint64_t *grid, uint32_t R, const double *sub,
                   uint32_t max_iter, double tol, double **A, uint32_t *iters)
{
    FD_TRY(bcp_lapack_load());
    fd_status st = FD_OK;
    const uint64_t K = grid_count(order, grid);
    const size_t RR = (size_t)R * R;
    uint64_t Imax = 0;
    for (uint32_t n = 0; n < order; n++) Imax = dims[n] > Imax ? dims[n] : Imax;
    /* Per sub-tensor: where its factors start, and its blocks. */
    uint64_t *off = malloc(K * sizeof *off), *lo = malloc(K * order * sizeof *lo);
    uint64_t *cnt = malloc(K * order * sizeof *cnt);
    double *P = malloc(K * order * RR * sizeof *P), *Q = malloc(K * order * RR * sizeof *Q);
    double *num = malloc(Imax * R * sizeof *num), *den = malloc(RR * sizeof *den), *H = malloc(RR * sizeof *H);
    double *uu = malloc(K * sizeof *uu);
    if (!off || !lo || !cnt || !P || !Q || !num || !den || !H || !uu) {
        st = fd_fail(FD_ERR_NOMEM, "out of memory for the fusion");
        goto done;
    }
    uint64_t at = 0;
    for (uint64_t k = 0; k < K; k++) {
        off[k] = at;
        bcp_grid_block(k, order, dims, grid, lo + k * order, cnt + k * order);
        for (uint32_t n = 0; n < order; n++) at += cnt[k * order + n] * R;
    }
    /* ||[[U_k]]||^2 = sum of the Hadamard product of the U_k(m)^T U_k(m). */
    for (uint64_t k = 0; k < K; k++) {
        for (uint32_t e = 0; e < RR; e++) H[e] = 1;
        const double *U = sub + off[k];
        for (uint32_t n = 0; n < order; n++) {
            gram(U, U, cnt[k * order + n], R, den);
            for (uint32_t e = 0; e < RR; e++) H[e] *= den[e];
            U += cnt[k * order + n] * R;
        }
        uu[k] = 0;
        for (uint32_t e = 0; e < RR; e++) uu[k] += H[e];
    }
    aligned_start(order, dims, grid, R, sub, off, cnt, A);
    /* P and Q of every sub-tensor and mode, kept current as blocks change. */
    double prev = INFINITY;
    *iters = 0;
    for (uint32_t it = 0; it < max_iter; it++) {
        for (uint32_t n = 0; n < order; n++) {
            for (uint64_t k = 0; k < K; k++)
                products(order, R, sub + off[k], cnt + k * order, lo + k * order, A, P + k * order * RR,
                         Q + k * order * RR);
            /* Each block of mode n from the sub-tensors that cover it. */
            for (uint64_t j = 0; j < grid[n]; j++) {
                uint64_t rows = 0, row0 = 0;
                memset(den, 0, RR * sizeof *den);
                int first = 1;
                for (uint64_t k = 0; k < K; k++) {
                    /* k's coordinate along mode n */
                    uint64_t v = k, kn = 0;
                    for (uint32_t m = order; m-- > 0;) {
                        if (m == n) kn = v % grid[m];
                        v /= grid[m];
                    }
                    if (kn != j) continue;
                    rows = cnt[k * order + n];
                    row0 = lo[k * order + n];
                    if (first) memset(num, 0, rows * R * sizeof *num);
                    first = 0;
                    for (uint32_t e = 0; e < RR; e++) H[e] = 1;
                    for (uint32_t m = 0; m < order; m++)
                        if (m != n)
                            for (uint32_t e = 0; e < RR; e++) H[e] *= P[(k * order + m) * RR + e];
                    const double *Un = sub + off[k];
                    for (uint32_t m = 0; m < n; m++) Un += cnt[k * order + m] * R;
                    for (uint64_t i = 0; i < rows; i++)
                        for (uint32_t b = 0; b < R; b++) {
                            double s = 0;
                            for (uint32_t a = 0; a < R; a++) s += Un[i * R + a] * H[a * R + b];
                            num[i * R + b] += s;
                        }
                    for (uint32_t e = 0; e < RR; e++) {
                        double q = 1;
                        for (uint32_t m = 0; m < order; m++)
                            if (m != n) q *= Q[(k * order + m) * RR + e];
                        den[e] += q;
                    }
                }
                if (!bcp_spd_solve_right(den, R, num, rows, A[n] + row0 * R)) {
                    st = fd_fail(FD_ERR_INPUT, "--fuse: the fusion's normal equations are singular (rank %u too high "
                                               "for the sub-tensors?)", R);
                    goto done;
                }
            }
        }
        /* The objective, from P and Q of the last mode's blocks. */
        double obj = 0;
        for (uint64_t k = 0; k < K; k++) {
            products(order, R, sub + off[k], cnt + k * order, lo + k * order, A, P + k * order * RR,
                     Q + k * order * RR);
            double up = 0, aq = 0;
            for (uint32_t e = 0; e < RR; e++) {
                double p = 1, q = 1;
                for (uint32_t m = 0; m < order; m++) {
                    p *= P[(k * order + m) * RR + e];
                    q *= Q[(k * order + m) * RR + e];
                }
                up += p;
                aq += q;
            }
            obj += uu[k] - 2 * up + aq;
        }
        *iters = it + 1;
        if (fabs(prev - obj) <= tol * fabs(obj) + 1e-300) break;
        prev = obj;
    }
done:
    free(off);
    free(lo);
    free(cnt);
    free(P);
    free(Q);
    free(num);
    free(den);
    free(H);
    free(uu);
    return st;
}
