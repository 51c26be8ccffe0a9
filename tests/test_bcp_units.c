/* Unit tests of bcp's small dense algebra: bcp_spd_inverse against
 * Gauss-Jordan elimination with partial pivoting in long double (an
 * independent method), at ranks from 1 to 256; the inverse must be
 * exactly symmetric (bcp's expected Gram matrices rely on it), its log
 * determinant right, and a matrix that is not positive definite refused.
 * The SVD start's mode Grams by column blocks (bcp_gram_by_columns)
 * against direct sums in long double, every mode of order-3 and order-4
 * tensors, with blocks and waves shrunk so that a Gram takes many of
 * each (a block's columns crossing the tensor's runs): the upper
 * triangle to 1e-13 relative, the lower 0, the same bits on 1, 2 and 3
 * threads. */
#include "bcp/bcp.h"
#include "bcp/bcp_lapack.h"
#include "bcp/chol.h"
#include "common/clock.h"
#include "common/gemm.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* inv = S^-1 and *logdet = ln |det S| by Gauss-Jordan in long double. */
static void gauss_jordan(const double *S, uint32_t R, long double *inv, long double *logdet)
{
    long double *a = malloc(sizeof *a * R * 2 * R);
    for (uint32_t i = 0; i < R; i++)
        for (uint32_t j = 0; j < 2 * R; j++) a[i * 2 * R + j] = j < R ? S[i * R + j] : j - R == i;
    *logdet = 0;
    for (uint32_t c = 0; c < R; c++) {
        uint32_t p = c;
        for (uint32_t i = c + 1; i < R; i++)
            if (fabsl(a[i * 2 * R + c]) > fabsl(a[p * 2 * R + c])) p = i;
        for (uint32_t j = 0; j < 2 * R; j++) {
            const long double t = a[c * 2 * R + j];
            a[c * 2 * R + j] = a[p * 2 * R + j];
            a[p * 2 * R + j] = t;
        }
        const long double d = a[c * 2 * R + c];
        *logdet += logl(fabsl(d));
        for (uint32_t j = 0; j < 2 * R; j++) a[c * 2 * R + j] /= d;
        for (uint32_t i = 0; i < R; i++) {
            if (i == c) continue;
            const long double f = a[i * 2 * R + c];
            for (uint32_t j = 0; j < 2 * R; j++) a[i * 2 * R + j] -= f * a[c * 2 * R + j];
        }
    }
    for (uint32_t i = 0; i < R; i++)
        for (uint32_t j = 0; j < R; j++) inv[i * R + j] = a[i * 2 * R + R + j];
    free(a);
}

/* S = B B^T + shift I for a random R x R B: positive definite, with a
 * condition number that grows as shift falls. */
static void random_spd(uint32_t R, double shift, fd_rng *rng, double *S)
{
    double *B = malloc(sizeof *B * R * R);
    for (uint32_t e = 0; e < R * R; e++) B[e] = fd_rng_normal(rng);
    for (uint32_t i = 0; i < R; i++)
        for (uint32_t j = 0; j < R; j++) {
            double s = i == j ? shift : 0;
            for (uint32_t k = 0; k < R; k++) s += B[i * R + k] * B[j * R + k];
            S[i * R + j] = s;
        }
    for (uint32_t i = 0; i < R; i++) /* exactly symmetric, as bcp's Psi is */
        for (uint32_t j = 0; j < i; j++) S[i * R + j] = S[j * R + i];
    free(B);
}

static void test_spd_inverse(void)
{
    static const uint32_t ranks[] = {1, 2, 3, 5, 16, 23, 32, 64, 100, 256};
    fd_rng rng = {11};
    for (size_t t = 0; t < sizeof ranks / sizeof *ranks; t++)
        for (int s = 0; s < 2; s++) {
            const uint32_t R = ranks[t];
            const double shift = s ? 1e-3 * R : (double)R; /* well and less well conditioned */
            double *S = malloc(sizeof *S * R * R), *inv = malloc(sizeof *inv * R * R), logdet = 0;
            long double *want = malloc(sizeof *want * R * R), want_ld = 0;
            random_spd(R, shift, &rng, S);
            gauss_jordan(S, R, want, &want_ld);
            CHECK(bcp_spd_inverse(S, R, inv, &logdet) == 1, "R=%u: positive definite matrix refused", R);
            long double err = 0, scale = 0;
            int sym = 1;
            for (uint32_t i = 0; i < R; i++)
                for (uint32_t j = 0; j < R; j++) {
                    err = fmaxl(err, fabsl(inv[i * R + j] - want[i * R + j]));
                    scale = fmaxl(scale, fabsl(want[i * R + j]));
                    sym &= inv[i * R + j] == inv[j * R + i];
                }
            /* Relative to the largest entry; the conditioning of the
             * second case allows some digits to go. */
            CHECK(err <= (s ? 1e-8L : 1e-12L) * scale, "R=%u shift %g: inverse off by %Lg (largest entry %Lg)", R,
                  shift, err, scale);
            CHECK(sym, "R=%u: the inverse is not exactly symmetric", R);
            CHECK(fabsl(logdet - want_ld) <= 1e-10L * (1 + fabsl(want_ld)), "R=%u: ln det %.17g, want %.17Lg", R,
                  logdet, want_ld);
            /* Not positive definite: a negative diagonal entry (e^T S e < 0). */
            S[(R - 1) * R + R - 1] = -1;
            CHECK(bcp_spd_inverse(S, R, inv, &logdet) == 0, "R=%u: indefinite matrix accepted", R);
            free(S);
            free(inv);
            free(want);
        }
}

/* G[i][j] = sum over the mode-n unfolding's columns of x[.. i ..] x[.. j ..]. */
static long double direct_gram(const bcp_tensor *t, uint32_t n, uint64_t i, uint64_t j)
{
    uint64_t L = 1, K = 1;
    for (uint32_t m = 0; m < n; m++) L *= t->dims[m];
    for (uint32_t m = n + 1; m < t->order; m++) K *= t->dims[m];
    const uint64_t I = t->dims[n];
    long double s = 0;
    for (uint64_t l = 0; l < L; l++)
        for (uint64_t k = 0; k < K; k++) s += (long double)t->x[(l * I + i) * K + k] * t->x[(l * I + j) * K + k];
    return s;
}

static void test_gram_by_columns(void)
{
    static const uint64_t shapes[][4] = {{7, 40, 30, 0}, {5, 9, 11, 13}, {60, 3, 4, 0}};
    fd_rng rng = {11};
    for (int c = 0; c < 3; c++) {
        bcp_tensor *t = NULL;
        const uint32_t N = shapes[c][3] ? 4 : 3;
        CHECK(bcp_tensor_create(&t, N, shapes[c]) == FD_OK, "bcp_tensor_create");
        if (!t) continue;
        for (uint64_t e = 0; e < t->size; e++) t->x[e] = fd_rng_normal(&rng);
        for (uint32_t n = 0; n < N; n++) {
            const uint64_t I = t->dims[n];
            double *G[3];
            for (int k = 0; k < 3; k++) {
                G[k] = malloc(I * I * sizeof *G[k]);
                /* blocks of 64 / I columns (at least 1), waves of 3 blocks */
                CHECK(G[k] && bcp_gram_by_columns(t, n, k + 1, 64, 3 * I * I, G[k]) == FD_OK, "shape %d mode %u: %s",
                      c, n, fd_errmsg());
            }
            double worst = 0;
            int lower = 1;
            for (uint64_t i = 0; i < I; i++)
                for (uint64_t j = 0; j < I; j++) {
                    if (j < i) {
                        lower &= G[0][i * I + j] == 0;
                        continue;
                    }
                    const long double want = direct_gram(t, n, i, j), scale = direct_gram(t, n, i, i);
                    const double err = (double)fabsl((long double)G[0][i * I + j] - want) / (double)scale;
                    worst = err > worst ? err : worst;
                }
            CHECK(worst < 1e-13, "shape %d mode %u: the Gram is off by %g (relative to its diagonal)", c, n, worst);
            CHECK(lower, "shape %d mode %u: the lower triangle is not 0", c, n);
            CHECK(!memcmp(G[0], G[1], I * I * sizeof *G[0]) && !memcmp(G[0], G[2], I * I * sizeof *G[0]),
                  "shape %d mode %u: the bits depend on the threads", c, n);
            for (int k = 0; k < 3; k++) free(G[k]);
        }
        bcp_tensor_destroy(&t);
    }
}

int main(void)
{
    if (bcp_lapack_load() != FD_OK || fd_blas_load() != FD_OK) {
        fprintf(stderr, "%s\n", fd_errmsg());
        return 1;
    }
    test_spd_inverse();
    if (fd_dgemm_can(1, 1, 1)) test_gram_by_columns();
    else printf("bcp_gram_by_columns: not tested (no BLAS in this build)\n");
    return t_report();
}
