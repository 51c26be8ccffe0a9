/* SPDX-License-Identifier: BSD-3-Clause */
/* The CPU backend of bcp (see bcp_backend.h): the factors in host memory
 * and the MTTKRPs by a dimension tree of two halves (Phan, Tichavsky &
 * Cichocki, IEEE TSP 61(19), 2013): the block, an L x K matrix with L the
 * rows of modes [0, h) and K those of [h, N), is contracted with one
 * half's Khatri-Rao product (T0 = Y KR, T1 = Y^T KL), and each mode's
 * MTTKRP then sums over the small intermediate of its half, so that a
 * sweep reads the block twice instead of N times.  The contractions by
 * OpenBLAS where the build has it (common/gemm.h), else plain loops (the
 * GPU machine has no BLAS); rows on threads, each row's sums in a fixed
 * order, so the result does not depend on the threads. */
#include "version.h" /* FD_HAVE_CUDA */

#include "bcp_backend.h"

#include "../common/backend.h"
#include "../common/dispatch.h"
#include "../common/gemm.h"
#include "../common/par_rows.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const bcp_tensor *t;
    uint32_t h;                 /* bcp_tree_split */
    uint32_t R, Rmax;           /* the factors' rank now, and the most they have room for */
    double *A[BCP_MAX_ORDER];   /* t->full[n] x R, row-major */
    double *M;                  /* the longest mode's rows x R */
    double *ka, *kb;            /* Khatri-Rao products: the other half's, or a half's modes before and after n */
    double *T[2];               /* span(0, h) x R and span(h, N) x R, row-major */
} cpu_state;

static void cpu_close(void *state)
{
    cpu_state *s = state;
    if (!s) return;
    for (uint32_t n = 0; n < BCP_MAX_ORDER; n++) free(s->A[n]);
    free(s->M);
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
    s->t = t;
    s->h = bcp_tree_split(t);
    s->R = s->Rmax = R;
    const uint64_t L = bcp_span(t, 0, s->h), K = bcp_span(t, s->h, t->order), big = L > K ? L : K;
    uint64_t Imax = 1;
    int ok = 1;
    for (uint32_t n = 0; n < t->order; n++) {
        Imax = t->full[n] > Imax ? t->full[n] : Imax;
        ok &= (s->A[n] = malloc(t->full[n] * R * sizeof *s->A[n])) != NULL;
    }
    s->M = malloc(Imax * R * sizeof *s->M);
    s->ka = malloc(big * R * sizeof *s->ka);
    s->kb = malloc(big * R * sizeof *s->kb);
    s->T[0] = malloc(L * R * sizeof *s->T[0]);
    s->T[1] = malloc(K * R * sizeof *s->T[1]);
    if (!ok || !s->M || !s->ka || !s->kb || !s->T[0] || !s->T[1]) {
        cpu_close(s);
        return fd_fail(FD_ERR_NOMEM, "out of memory for the factors and the MTTKRP's intermediates (%llu and %llu rows)",
                       (unsigned long long)L, (unsigned long long)K);
    }
    *state = s;
    return FD_OK;
}

static fd_status cpu_put(void *state, const double *const *A, uint32_t R)
{
    cpu_state *s = state;
    if (R > s->Rmax) return fd_fail(FD_ERR_INTERNAL, "bcp: rank %u above %u", R, s->Rmax);
    s->R = R;
    for (uint32_t n = 0; n < s->t->order; n++) memcpy(s->A[n], A[n], s->t->full[n] * R * sizeof *A[n]);
    return FD_OK;
}

static fd_status cpu_get(void *state, double *const *A)
{
    const cpu_state *s = state;
    for (uint32_t n = 0; n < s->t->order; n++) memcpy(A[n], s->A[n], s->t->full[n] * s->R * sizeof *A[n]);
    return FD_OK;
}

/* The block's rows of every factor. */
static void block_rows(const cpu_state *s, const double **A)
{
    for (uint32_t k = 0; k < s->t->order; k++) A[k] = s->A[k] + s->t->lo[k] * s->R;
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

static fd_status cpu_contract(void *state, int side, int threads)
{
    cpu_state *s = state;
    const bcp_tensor *t = s->t;
    const uint32_t R = s->R;
    const double *A[BCP_MAX_ORDER];
    block_rows(s, A);
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

static fd_status cpu_mttkrp(void *state, uint32_t n, int threads)
{
    cpu_state *s = state;
    const bcp_tensor *t = s->t;
    const uint32_t R = s->R;
    const int side = n >= s->h;
    const uint32_t a = side ? s->h : 0, b = side ? t->order : s->h;
    const double *A[BCP_MAX_ORDER];
    block_rows(s, A);
    memset(s->M, 0, t->full[n] * R * sizeof *s->M);
    rows_ctx c = {s, t, n, R, 0, 0, bcp_span(t, a, n), t->dims[n], bcp_span(t, n + 1, b), s->T[side],
                  s->M + t->lo[n] * R};
    khatri_rao(t, A, R, a, n, s->ka);
    khatri_rao(t, A, R, n + 1, b, s->kb);
    if (threads < 1) threads = 1;
    return par_rows_chunk(threads, 0, c.I, c.I / (4 * (uint64_t)threads), mttkrp_rows, &c, NULL);
}

static fd_status cpu_sum_rows(void *state, const bcp_comm *comm, uint32_t n, uint64_t *o0, uint64_t *o1, int *whole)
{
    cpu_state *s = state;
    *o0 = 0;
    *o1 = s->t->full[n];
    *whole = !comm || !comm->sum_rows;
    if (*whole) return FD_OK;
    return comm->sum_rows(comm->ctx, s->M, s->t->full[n], s->R, o0, o1);
}

/* A (I x R) = tau M Sigma: the sums over q in order, along rows of Sigma. */
FD_HOT static void update_means(const double *M, const double *Sigma, double tau, uint64_t I, uint32_t R, double *A)
{
    for (uint64_t i = 0; i < I; i++) {
        double acc[256];
        for (uint32_t r = 0; r < R; r++) acc[r] = 0;
        for (uint32_t q = 0; q < R; q++) {
            const double v = M[i * R + q], *sg = Sigma + q * R;
            for (uint32_t r = 0; r < R; r++) acc[r] += v * sg[r];
        }
        for (uint32_t r = 0; r < R; r++) A[i * R + r] = tau * acc[r];
    }
}

static fd_status cpu_update(void *state, uint32_t n, const double *Sigma, double tau, int nonneg, uint64_t o0,
                            uint64_t o1)
{
    cpu_state *s = state;
    const uint32_t R = s->R;
    double *A = s->A[n];
    update_means(s->M + o0 * R, Sigma, tau, o1 - o0, R, A + o0 * R);
    if (nonneg)
        for (uint64_t i = o0 * R; i < o1 * R; i++) A[i] = A[i] > 0 ? A[i] : 0;
    return FD_OK;
}

static fd_status cpu_gather_rows(void *state, const bcp_comm *comm, uint32_t n)
{
    cpu_state *s = state;
    if (!comm || !comm->gather_rows) return FD_OK;
    return comm->gather_rows(comm->ctx, s->A[n], s->t->full[n], s->R);
}

/* G (R x R) = the sum over the rows of A of a_i a_i^T.  Rows in the outer
 * loop, four at a time (each entry still sums over i in order), so that
 * the inner loop runs along a row and loads and stores G once for four
 * products; exactly symmetric (a_p a_q = a_q a_p). */
FD_HOT static fd_status cpu_gram(void *state, uint32_t n, uint64_t o0, uint64_t o1, double *G, double *v)
{
    const cpu_state *s = state;
    if (v) {
        double sum = 0;
        for (uint64_t e = o0 * s->R; e < o1 * s->R; e++) sum += s->M[e] * s->A[n][e];
        *v = sum;
    }
    const uint32_t R = s->R;
    const uint64_t I = s->t->full[n];
    const double *A = s->A[n];
    for (uint32_t e = 0; e < R * R; e++) G[e] = 0;
    uint64_t i = 0;
    for (; i + 4 <= I; i += 4) {
        const double *a0 = A + i * R, *a1 = a0 + R, *a2 = a1 + R, *a3 = a2 + R;
        for (uint32_t p = 0; p < R; p++) {
            const double b0 = a0[p], b1 = a1[p], b2 = a2[p], b3 = a3[p];
            double *g = G + p * R;
            for (uint32_t q = 0; q < R; q++) g[q] = g[q] + b0 * a0[q] + b1 * a1[q] + b2 * a2[q] + b3 * a3[q];
        }
    }
    for (; i < I; i++) {
        const double *a = A + i * R;
        for (uint32_t p = 0; p < R; p++) {
            const double ap = a[p];
            double *g = G + p * R;
            for (uint32_t q = 0; q < R; q++) g[q] += ap * a[q];
        }
    }
    return FD_OK;
}

static fd_status cpu_scale(void *state, const double *sc)
{
    cpu_state *s = state;
    const uint32_t R = s->R;
    for (uint32_t n = 0; n < s->t->order; n++)
        for (uint64_t i = 0; i < s->t->full[n]; i++)
            for (uint32_t r = 0; r < R; r++) s->A[n][i * R + r] *= sc[n * R + r];
    return FD_OK;
}

/* In place: entry (i, a) of the packed factor never lies after (i,
 * keep[a]) of the old one, which is read first. */
static fd_status cpu_keep(void *state, const uint32_t *keep, uint32_t K)
{
    cpu_state *s = state;
    const uint32_t R = s->R;
    for (uint32_t n = 0; n < s->t->order; n++)
        for (uint64_t i = 0; i < s->t->full[n]; i++)
            for (uint32_t a = 0; a < K; a++) s->A[n][i * K + a] = s->A[n][i * R + keep[a]];
    s->R = K;
    return FD_OK;
}

const struct bcp_ops bcp_cpu_ops = {
    .dev = {.name = "cpu"},
    .open = cpu_open,
    .close = cpu_close,
    .put = cpu_put,
    .get = cpu_get,
    .contract = cpu_contract,
    .mttkrp = cpu_mttkrp,
    .sum_rows = cpu_sum_rows,
    .update = cpu_update,
    .gather_rows = cpu_gather_rows,
    .gram = cpu_gram,
    .scale = cpu_scale,
    .keep = cpu_keep,
};

/* The dev part of each backend's table (common/backend.h): a workload's
 * ops start with it, so each entry also points to the whole table. */
static const fd_device_ops *const backends[] = {
    &bcp_cpu_ops.dev,
#if FD_HAVE_CUDA
    &bcp_cuda_ops.dev,
#endif
};

FD_BACKEND_REGISTRY(bcp, struct bcp_ops)
