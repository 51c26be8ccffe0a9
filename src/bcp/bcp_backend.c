/* The CPU backend of bcp (see bcp_backend.h): the MTTKRPs by a dimension
 * tree of two halves (Phan, Tichavsky & Cichocki, IEEE TSP 61(19), 2013):
 * the block, an L x K matrix with L the rows of modes [0, h) and K those
 * of [h, N), is contracted with one half's Khatri-Rao product (T0 = Y KR,
 * T1 = Y^T KL), and each mode's MTTKRP then sums over the small
 * intermediate of its half, so that a sweep reads the block twice instead
 * of N times.  The contractions by OpenBLAS where the build has it
 * (common/gemm.h), else plain loops (the GPU machine has no BLAS); rows on
 * threads, each row's sums in a fixed order, so the result does not
 * depend on the threads. */
#include "version.h" /* FD_HAVE_CUDA */

#include "bcp_backend.h"

#include "../common/backend.h"
#include "../common/dispatch.h"
#include "../common/gemm.h"
#include "../common/par_rows.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t h;        /* bcp_tree_split */
    double *ka, *kb;   /* Khatri-Rao products: the other half's, or a half's modes before and after n */
    double *T[2];      /* span(0, h) x R and span(h, N) x R, row-major */
} cpu_state;

static void cpu_close(void *state)
{
    cpu_state *s = state;
    if (!s) return;
    free(s->ka);
    free(s->kb);
    free(s->T[0]);
    free(s->T[1]);
    free(s);
}

static fd_status cpu_open(void **state, const bcp_tensor *t, uint32_t R, int device)
{
    (void)device;
    cpu_state *s = calloc(1, sizeof *s);
    if (!s) return fd_fail(FD_ERR_NOMEM, "out of memory");
    s->h = bcp_tree_split(t);
    const uint64_t L = bcp_span(t, 0, s->h), K = bcp_span(t, s->h, t->order), big = L > K ? L : K;
    s->ka = malloc(big * R * sizeof *s->ka);
    s->kb = malloc(big * R * sizeof *s->kb);
    s->T[0] = malloc(L * R * sizeof *s->T[0]);
    s->T[1] = malloc(K * R * sizeof *s->T[1]);
    if (!s->ka || !s->kb || !s->T[0] || !s->T[1]) {
        cpu_close(s);
        return fd_fail(FD_ERR_NOMEM, "out of memory for the MTTKRP's intermediates (%llu and %llu rows)",
                       (unsigned long long)L, (unsigned long long)K);
    }
    *state = s;
    return FD_OK;
}

/* The Khatri-Rao product of A[a], ..., A[b - 1] (the block's rows) in C
 * order (row index i_a ... i_{b-1}, the last fastest): rows x R, built in
 * place from the last rows back, so that no row is overwritten before it
 * is read. */
static void khatri_rao(const bcp_tensor *t, const double *const *Af, uint32_t R, uint32_t a, uint32_t b, double *out)
{
    uint64_t rows = 1;
    for (uint32_t r = 0; r < R; r++) out[r] = 1;
    for (uint32_t n = a; n < b; n++) {
        const uint64_t I = t->dims[n];
        const double *A = Af[n];
        for (uint64_t q = rows; q-- > 0;) {
            double row[256];
            memcpy(row, out + q * R, R * sizeof *row);
            for (uint64_t i = I; i-- > 0;)
                for (uint32_t r = 0; r < R; r++) out[(q * I + i) * R + r] = row[r] * A[i * R + r];
        }
        rows *= I;
    }
}

typedef struct {
    const cpu_state *s;
    const bcp_tensor *t;
    uint32_t n, R;
    uint64_t L, K;     /* the block as an L x K matrix (contract); P x I x Q around mode n (mttkrp) */
    uint64_t P, I, Q;
    const double *T;
    double *M;
} rows_ctx;

/* Rows [l0, l1) of T0 = Y KR (KR in kb). */
FD_HOT static fd_status contract0_rows(void *arg, uint64_t l0, uint64_t l1, int thread)
{
    const rows_ctx *c = arg;
    const uint32_t R = c->R;
    double acc[256];
    (void)thread;
    for (uint64_t l = l0; l < l1; l++) {
        const double *y = c->t->x + l * c->K;
        for (uint32_t r = 0; r < R; r++) acc[r] = 0;
        for (uint64_t k = 0; k < c->K; k++) {
            const double v = y[k], *kr = c->s->kb + k * R;
            for (uint32_t r = 0; r < R; r++) acc[r] += v * kr[r];
        }
        memcpy(c->s->T[0] + l * R, acc, R * sizeof *acc);
    }
    return FD_OK;
}

/* Rows [k0, k1) of T1 = Y^T KL (KL in ka), summed over l in order. */
FD_HOT static fd_status contract1_rows(void *arg, uint64_t k0, uint64_t k1, int thread)
{
    const rows_ctx *c = arg;
    const uint32_t R = c->R;
    double *T = c->s->T[1];
    (void)thread;
    memset(T + k0 * R, 0, (k1 - k0) * R * sizeof *T);
    for (uint64_t l = 0; l < c->L; l++) {
        const double *y = c->t->x + l * c->K, *kl = c->s->ka + l * R;
        for (uint64_t k = k0; k < k1; k++) {
            const double v = y[k];
            for (uint32_t r = 0; r < R; r++) T[k * R + r] += v * kl[r];
        }
    }
    return FD_OK;
}

static fd_status cpu_contract(void *state, const bcp_tensor *t, int side, const double *const *A, uint32_t R,
                              int threads)
{
    cpu_state *s = state;
    rows_ctx c = {s, t, 0, R, bcp_span(t, 0, s->h), bcp_span(t, s->h, t->order), 0, 0, 0, NULL, NULL};
    if (threads < 1) threads = 1;
    if (side == 0) {
        khatri_rao(t, A, R, s->h, t->order, s->kb);
        if (fd_dgemm_can(c.L, R, c.K)) { /* T0 (L x R) = Y (L x K) KR (K x R) */
            fd_dgemm(0, c.L, R, c.K, t->x, c.K, s->kb, R, s->T[0], R, threads);
            return FD_OK;
        }
        return par_rows_chunk(threads, 0, c.L, c.L / (4 * (uint64_t)threads), contract0_rows, &c, NULL);
    }
    khatri_rao(t, A, R, 0, s->h, s->ka);
    if (fd_dgemm_can(c.K, R, c.L)) { /* T1 (K x R) = Y^T (K x L) KL (L x R) */
        fd_dgemm(1, c.K, R, c.L, t->x, c.K, s->ka, R, s->T[1], R, threads);
        return FD_OK;
    }
    /* Chunks of at least 512 columns: each pass over l then reads 4 KB runs. */
    const uint64_t chunk = c.K / (4 * (uint64_t)threads) > 512 ? c.K / (4 * (uint64_t)threads) : 512;
    return par_rows_chunk(threads, 0, c.K, chunk, contract1_rows, &c, NULL);
}

/* Rows [i0, i1) of M: M[i, r] = sum over p of KA[p, r] times the sum over
 * q of T[(p I + i) Q + q, r] KB[q, r]. */
FD_HOT static fd_status mttkrp_rows(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const rows_ctx *c = arg;
    const uint32_t R = c->R;
    double tmp[256];
    (void)thread;
    for (uint64_t i = i0; i < i1; i++)
        for (uint32_t r = 0; r < R; r++) c->M[i * R + r] = 0;
    for (uint64_t p = 0; p < c->P; p++)
        for (uint64_t i = i0; i < i1; i++) {
            const double *y = c->T + (p * c->I + i) * c->Q * R;
            for (uint32_t r = 0; r < R; r++) tmp[r] = 0;
            for (uint64_t q = 0; q < c->Q; q++) {
                const double *kb = c->s->kb + q * R;
                for (uint32_t r = 0; r < R; r++) tmp[r] += y[q * R + r] * kb[r];
            }
            for (uint32_t r = 0; r < R; r++) c->M[i * R + r] += c->s->ka[p * R + r] * tmp[r];
        }
    return FD_OK;
}

static fd_status cpu_mttkrp(void *state, const bcp_tensor *t, uint32_t n, const double *const *A, uint32_t R,
                            int threads, double *M)
{
    cpu_state *s = state;
    const int side = n >= s->h;
    const uint32_t a = side ? s->h : 0, b = side ? t->order : s->h;
    rows_ctx c = {s, t, n, R, 0, 0, bcp_span(t, a, n), t->dims[n], bcp_span(t, n + 1, b), s->T[side], M};
    khatri_rao(t, A, R, a, n, s->ka);
    khatri_rao(t, A, R, n + 1, b, s->kb);
    if (threads < 1) threads = 1;
    return par_rows_chunk(threads, 0, c.I, c.I / (4 * (uint64_t)threads), mttkrp_rows, &c, NULL);
}

static int cpu_available(void) { return 1; }

const struct bcp_ops bcp_cpu_ops = {"cpu", NULL, NULL, cpu_open, cpu_close, cpu_contract, cpu_mttkrp};

#if FD_HAVE_CUDA
static int cuda_available(void) { return bcp_cuda_ops.devices() > 0; }
#endif

static const fd_backend backends[] = {
    {"cpu", cpu_available, &bcp_cpu_ops},
#if FD_HAVE_CUDA
    {"cuda", cuda_available, &bcp_cuda_ops},
#endif
};

fd_status bcp_backend_get(const char *name, const struct bcp_ops **ops)
{
    const void *p = NULL;
    FD_TRY(fd_backend_get(backends, sizeof backends / sizeof *backends, "bcp", name, &p));
    *ops = p;
    return FD_OK;
}
