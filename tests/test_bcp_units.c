/* Unit tests of bcp's small dense algebra: bcp_spd_inverse against
 * Gauss-Jordan elimination with partial pivoting in long double (an
 * independent method), at ranks from 1 to 256; the inverse must be
 * exactly symmetric (bcp's expected Gram matrices rely on it), its log
 * determinant right, and a matrix that is not positive definite refused. */
#include "bcp/bcp_lapack.h"
#include "bcp/chol.h"
#include "common/clock.h"
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

int main(void)
{
    if (bcp_lapack_load() != FD_OK) {
        fprintf(stderr, "%s\n", fd_errmsg());
        return 1;
    }
    test_spd_inverse();
    return t_report();
}
