/* SPDX-License-Identifier: BSD-3-Clause */
/* Variational Bayes for the CP model of bcp.h.  Per sweep, for each mode
 * n in turn (BCPF, eqs. 21-23 and 26-27 of the paper):
 *   Psi_n   = Hadamard product over m != n of E[A(m)^T A(m)]
 *   Sigma_n = (tau Psi_n + diag(lambda))^-1
 *   A(n)    = tau MTTKRP_n(Y) Sigma_n      (MTTKRP: Y_(n) times the
 *                                           Khatri-Rao product of the others)
 *   E[A(n)^T A(n)] = A(n)^T A(n) + I_n Sigma_n
 * then lambda, tau and the lower bound.  Every step maximises the bound
 * over its block given the others, so the bound never decreases while the
 * rank stays (--nonneg breaks this: the projection is not a VB step).
 * Here only the R x R algebra: every step over I_n x R numbers (the
 * MTTKRP, the means' update, the Gram matrices) is the backend's, which
 * holds the factors between sweeps (bcp_backend.h). */
#include "bcp.h"

#include "../common/clock.h"
#include "../common/gemm.h"
#include "../common/interrupt.h"
#include "../common/par_rows.h"
#include "bcp_backend.h"
#include "bcp_lapack.h"
#include "chol.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* The longest mode the SVD start takes (see bcp_fit). */
#define SVD_MAX 2048

#define BALANCE_AFTER BCP_BALANCE_AFTER

/* The Gamma priors' shape and rate (BCPF's a0 = b0 = c0 = d0). */
#define PRIOR 1e-6

static double digamma(double x)
{
    double r = 0;
    while (x < 6) {
        r -= 1 / x;
        x += 1;
    }
    const double f = 1 / (x * x);
    return r + log(x) - 0.5 / x - f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

/* The work arrays of one fit.  The factors themselves live with the
 * backend during the sweeps (bcp_backend.h); the model's A holds the
 * start and, at the end, the result. */
typedef struct {
    const bcp_tensor *t;        /* this rank's block */
    const bcp_comm *comm;
    const struct bcp_ops *ops;  /* the backend's */
    void *state;
    bcp_model *m;
    double *AA[BCP_MAX_ORDER];  /* R x R: A(n)^T A(n) */
    double *EAA[BCP_MAX_ORDER]; /* R x R: E[A(n)^T A(n)] = A^T A + I_n Sigma_n */
    double *psi;                /* R x R */
    double yy;                  /* ||Y||^2 */
    int threads;
    double logdet[BCP_MAX_ORDER];
} work;

/* Sums v over the ranks (nothing to do on one). */
static fd_status reduce(const work *w, double *v, uint64_t n)
{
    if (!w->comm || !w->comm->sum) return FD_OK;
    const double t0 = fd_now();
    const fd_status st = w->comm->sum(w->comm->ctx, v, n);
    w->m->sum_seconds += fd_now() - t0;
    return st;
}

/* A backend call's status, its wall time added to *seconds. */
#define TIMED(call, seconds)                                                                                           \
    do {                                                                                                               \
        const double t0_ = fd_now();                                                                                   \
        const fd_status st_ = (call);                                                                                  \
        (seconds) += fd_now() - t0_;                                                                                   \
        if (st_ != FD_OK) return st_;                                                                                  \
    } while (0)

/* EAA[n] = AA[n] + I_n Sigma_n: derived, after every change of either. */
static void expect(work *w, uint32_t n)
{
    const bcp_model *m = w->m;
    const uint32_t R = m->R;
    for (uint32_t e = 0; e < R * R; e++) w->EAA[n][e] = w->AA[n][e] + (double)m->dims[n] * m->Sigma[n][e];
}

/* AA[n] and EAA[n] of the backend's A(n); with v, *v = <M, A(n)> over
 * rows [o0, o1). */
static fd_status expect_gram(work *w, uint32_t n, uint64_t o0, uint64_t o1, double *v)
{
    FD_TRY(w->ops->gram(w->state, n, o0, o1, w->AA[n], v));
    expect(w, n);
    return FD_OK;
}

/* The leading R eigenvectors of the symmetric I x I matrix G (destroyed),
 * scaled by the (2N)-th root of their eigenvalues: U S^(1/N) of the
 * unfolding Y_(n) = U S V^T (G = Y_(n) Y_(n)^T), which for a rank-one
 * tensor sigma u o v o w gives every mode sigma^(1/N) times its vector, so
 * that the start is at the data's scale in every mode.  Components past
 * I get Gaussian entries of scale sd.  LAPACK's dsyevr (the MRRR method),
 * the leading min(R, I) pairs only: a 1000 x 8 x 8 tensor's start took
 * 74.7 s with the cyclic Jacobi sweeps it replaced (bench/results/ab.csv).
 * Each vector's sign is fixed (its largest entry positive), so that every
 * LAPACK gives the same start. */
static fd_status leading_eigen(double *G, uint64_t I, uint32_t R, uint32_t N, double sd, double *A, fd_rng *rng)
{
    fd_status st = FD_OK;
    const uint64_t k = R < I ? R : I;
    double *w = NULL, *Z = NULL;
    lapack_int *isuppz = NULL, found = 0;
    if (I > (uint64_t)INT32_MAX / 2) return fd_fail(FD_ERR_INTERNAL, "leading_eigen: %llu rows", (unsigned long long)I);
    FD_ALLOC_GOTO(w, I, st, done);
    FD_ALLOC_GOTO(Z, I * k, st, done);
    FD_ALLOC_GOTO(isuppz, 2 * k, st, done);
    /* Eigenvalues il..iu of I, ascending: the k largest. */
    const lapack_int n = (lapack_int)I, il = (lapack_int)(I - k + 1), iu = (lapack_int)I;
    const lapack_int info = bcp_lapack.dsyevr(LAPACK_ROW_MAJOR, 'V', 'I', 'U', n, G, n, 0, 0, il, iu, 0, &found, w,
                                              Z, (lapack_int)k, isuppz);
    if (info != 0 || (uint64_t)found != k) {
        st = fd_fail(FD_ERR_INTERNAL, "LAPACK dsyevr failed on mode Gram of %llu rows (info %d)",
                     (unsigned long long)I, (int)info);
        goto done;
    }
    for (uint32_t r = 0; r < R; r++) {
        if (r < k) {
            const uint64_t c = k - 1 - r; /* decreasing */
            const double ev = w[c], s = ev > 0 ? pow(ev, 0.5 / N) : 0;
            uint64_t big = 0;
            for (uint64_t i = 1; i < I; i++)
                if (fabs(Z[i * k + c]) > fabs(Z[big * k + c])) big = i;
            const double sign = Z[big * k + c] < 0 ? -1 : 1;
            for (uint64_t i = 0; i < I; i++) A[i * R + r] = sign * Z[i * k + c] * s;
        } else { /* more components than rows: random, as BCPF pads */
            for (uint64_t i = 0; i < I; i++) A[i * R + r] = sd * fd_rng_normal(rng);
        }
    }
done:
    free(w);
    free(Z);
    free(isuppz);
    return st;
}

/* The doubles of one column chunk of the mode Gram's gathered rows (32
 * MB): bounds the start's extra memory whatever the tensor's size. */
#define GRAM_CHUNK (1u << 22)

typedef struct {
    const double *all; /* F x c: the chunk's columns of every row of mode n */
    uint64_t F, c, o;  /* full rows, columns, this block's first row */
    double *G;
} gram_ctx;

/* Rows [i0, i1) of this block against all F rows, over the chunk. */
static fd_status gram_rows(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const gram_ctx *g = arg;
    (void)thread;
    for (uint64_t i = i0; i < i1; i++) {
        const double *a = g->all + (g->o + i) * g->c;
        for (uint64_t j = 0; j < g->F; j++) {
            const double *b = g->all + j * g->c;
            double s = 0;
            for (uint64_t k = 0; k < g->c; k++) s += a[k] * b[k];
            g->G[(g->o + i) * g->F + j] += s;
        }
    }
    return FD_OK;
}

/* The column path of mode_gram (a whole mode of few rows): the
 * unfolding's columns in blocks of `sb`, each block's Gram P_b = X_b
 * X_b^T (I x I, its upper triangle: dsyrk, half the products) by one
 * thread's one-thread BLAS call, a wave of W blocks at a time, then G +=
 * P_b in block order, split by G's rows; G's lower triangle stays 0.  Every
 * entry is summed in an order fixed by the shape alone, so the bits do
 * not depend on the threads; each block's copy out of the tensor is its
 * own thread's.  Rows of G split among the threads instead (fd_dgemm_abt)
 * gave a mode of 100 rows two threads: 8.2 s of a 100^4 tensor's start on
 * 16 cores, for a sweep of 1 ms on its GPU. */
#define GRAM_COL_ROWS 512              /* modes up to this many rows */
#define GRAM_COL_BUF (1u << 19)        /* doubles of a block's copy (sb = this / I) */
#define GRAM_COL_PARTS (1u << 23)      /* doubles of a wave's partial Grams */

typedef struct {
    const double *x;
    uint64_t I, K, cols, sb, b0;       /* the unfolding's columns, the block's, the wave's first block */
    double *bufs, *parts, *G;          /* a buffer a thread (I x sb), a partial a block (I x I) */
    uint64_t wb;                       /* blocks in this wave */
} gram_cols_ctx;

static void copy_columns(const double *x, uint64_t I, uint64_t K, uint64_t j0, uint64_t cc, double *dst);

static fd_status gram_col_blocks(void *arg, uint64_t b0, uint64_t b1, int thread)
{
    const gram_cols_ctx *g = arg;
    double *buf = g->bufs + (uint64_t)thread * g->I * g->sb;
    for (uint64_t b = b0; b < b1; b++) {
        const uint64_t j0 = (g->b0 + b) * g->sb, cc = g->cols - j0 < g->sb ? g->cols - j0 : g->sb;
        copy_columns(g->x, g->I, g->K, j0, cc, buf);
        fd_dsyrk_upper_here(g->I, cc, buf, cc, g->parts + b * g->I * g->I, g->I);
    }
    return FD_OK;
}

static fd_status gram_col_sum(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const gram_cols_ctx *g = arg;
    (void)thread;
    for (uint64_t b = 0; b < g->wb; b++) {
        const double *P = g->parts + b * g->I * g->I;
        for (uint64_t i = i0; i < i1; i++) /* the upper triangle, which dsyrk wrote */
            for (uint64_t j = i; j < g->I; j++) g->G[i * g->I + j] += P[i * g->I + j];
    }
    return FD_OK;
}

fd_status bcp_gram_by_columns(const bcp_tensor *t, uint32_t n, int threads, uint64_t buf, uint64_t parts, double *G)
{
    const uint64_t L = bcp_span(t, 0, n), I = t->dims[n], K = bcp_span(t, n + 1, t->order);
    buf = buf ? buf : GRAM_COL_BUF;
    parts = parts ? parts : GRAM_COL_PARTS;
    const uint64_t sb = buf / I > 0 ? buf / I : 1, nb = (L * K + sb - 1) / sb;
    const uint64_t fit = parts / (I * I) > 0 ? parts / (I * I) : 1, W = fit < nb ? fit : nb;
    gram_cols_ctx g = {t->x, I, K, L * K, sb, 0, NULL, NULL, G, 0};
    fd_status st = FD_OK;
    threads = threads > 0 ? threads : 1;
    if (!fd_dgemm_can(I, I, sb)) return fd_fail(FD_ERR_INTERNAL, "bcp_gram_by_columns: no BLAS for %llu rows",
                                                (unsigned long long)I);
    g.bufs = malloc((uint64_t)threads * I * sb * sizeof *g.bufs);
    g.parts = malloc(W * I * I * sizeof *g.parts);
    if (!g.bufs || !g.parts) st = fd_fail(FD_ERR_NOMEM, "out of memory for the SVD start of mode %u", n + 1);
    memset(G, 0, I * I * sizeof *G);
    fd_blas_one_thread();
    for (uint64_t b0 = 0; b0 < nb && st == FD_OK; b0 += W) {
        g.b0 = b0;
        g.wb = nb - b0 < W ? nb - b0 : W;
        st = par_rows_chunk(threads, 0, g.wb, 1, gram_col_blocks, &g, NULL);
        if (st == FD_OK) st = par_rows_chunk(threads, 0, I, 8, gram_col_sum, &g, NULL);
    }
    free(g.bufs);
    free(g.parts);
    return st;
}

/* Columns [j0, j0 + cc) of the mode unfolding of x (L x I x K in C order:
 * column j is (l, k) = (j / K, j % K)) into dst (I x cc), run by run of
 * the tensor's order, each across the I rows: the last modes' runs are a
 * few values (one for the last), read along the tensor rather than I
 * times across it (row by row, and a call a value, was most of the
 * start's time). */
static void copy_columns(const double *x, uint64_t I, uint64_t K, uint64_t j0, uint64_t cc, double *dst)
{
    for (uint64_t j = j0; j < j0 + cc;) {
        const uint64_t l = j / K, k = j % K, run = K - k < j0 + cc - j ? K - k : j0 + cc - j;
        for (uint64_t i = 0; i < I; i++) {
            const double *src = x + (l * I + i) * K + k;
            double *d = dst + i * cc + (j - j0);
            if (run >= 32) memcpy(d, src, run * sizeof *d);
            else
                for (uint64_t q = 0; q < run; q++) d[q] = src[q];
        }
        j += run;
    }
}

/* G = Y_(n) Y_(n)^T (I_n x I_n): this block's rows of it, over this
 * block's columns of the unfolding, to be summed over the ranks.  A row
 * of G needs every row of mode n at the same columns, which the ranks
 * along mode n's axis of the grid hold: the columns go round in chunks
 * (comm->gather).  By BLAS where the build has it (a chunk's rows of G
 * += mine all^T: the loops below streamed every row of the chunk once per
 * row of G, 4.4-4.8 s of a 100^4 tensor's start on 16 cores, 21 s on 2); the
 * sums over a chunk's columns go in an order that does not depend on the
 * threads either way.  Only the upper triangle is read (dsyevr). */
static fd_status mode_gram(const work *w, uint32_t n, double *G)
{
    const bcp_tensor *t = w->t;
    const uint64_t L = bcp_span(t, 0, n), I = t->dims[n], K = bcp_span(t, n + 1, t->order), F = t->full[n];
    const int gather = w->comm && w->comm->gather && I < F;
    const uint64_t c = L * K < GRAM_CHUNK / F ? L * K : GRAM_CHUNK / F > 0 ? GRAM_CHUNK / F : 1;
    if (I < F && !gather) return fd_fail(FD_ERR_INTERNAL, "bcp: a split mode %u without a gather", n + 1);
    fd_status st = FD_OK;
    const int blas = fd_dgemm_can(F, I, c);
    if (blas && I == F && I <= GRAM_COL_ROWS) return bcp_gram_by_columns(t, n, w->threads, 0, 0, G);
    double *mine = malloc(I * c * sizeof *mine), *all = gather ? malloc(F * c * sizeof *all) : mine;
    double *GI = blas ? malloc(I * F * sizeof *GI) : NULL;
    if (!mine || !all || (blas && !GI)) {
        st = fd_fail(FD_ERR_NOMEM, "out of memory for the SVD start of mode %u", n + 1);
        goto done;
    }
    memset(G, 0, F * F * sizeof *G);
    /* Column j of the unfolding (of this block's L K) is (l, k) = (j / K,
     * j % K); a chunk takes c of them, across l. */
    for (uint64_t j0 = 0; j0 < L * K; j0 += c) {
        const uint64_t cc = L * K - j0 < c ? L * K - j0 : c;
        copy_columns(t->x, I, K, j0, cc, mine);
        if (gather) FD_TRY_GOTO(w->comm->gather(w->comm->ctx, n, mine, cc, all), st, done);
        if (blas) { /* GI (I x F) = mine (I x cc) all^T (cc x F) */
            fd_dgemm_abt(I, F, cc, mine, cc, all, cc, GI, F, w->threads);
            double *Go = G + t->lo[n] * F;
            for (uint64_t e = 0; e < I * F; e++) Go[e] += GI[e];
        } else {
            gram_ctx g = {all, F, cc, t->lo[n], G};
            FD_TRY_GOTO(par_rows_chunk(w->threads, 0, I, 1, gram_rows, &g, NULL), st, done);
        }
    }
done:
    if (all != mine) free(all);
    free(mine);
    free(GI);
    return st;
}

uint32_t bcp_components_kept(const double *power, uint32_t R, uint64_t rows, uint32_t *keep)
{
    double all = 0;
    for (uint32_t r = 0; r < R; r++) all += power[r];
    const double norm = sqrt(all), tol = (double)rows * (nextafter(norm, INFINITY) - norm);
    uint32_t K = 0;
    for (uint32_t r = 0; r < R; r++)
        if (power[r] > tol) keep[K++] = r;
    return K;
}

/* Drops the components whose power sum_n ||a_r(n)||^2 (the diagonals
 * of the Gram matrices) is below BCPF's tolerance: sum_n I_n times the
 * spacing of doubles at the norm of all factors together.  *kept: the
 * components kept. */
static fd_status prune(work *w, uint32_t *kept)
{
    bcp_model *m = w->m;
    const uint32_t R = m->R;
    double power[256] = {0};
    uint64_t rows = 0;
    for (uint32_t n = 0; n < m->order; n++) {
        rows += m->dims[n];
        for (uint32_t r = 0; r < R; r++) power[r] += w->AA[n][r * R + r];
    }
    uint32_t keep[256], K = bcp_components_kept(power, R, rows, keep);
    *kept = K;
    if (K == R || K == 0) return FD_OK;
    FD_TRY(w->ops->keep(w->state, keep, K));
    for (uint32_t n = 0; n < m->order; n++)
        for (uint32_t a = 0; a < K; a++)
            for (uint32_t b = 0; b < K; b++) {
                m->Sigma[n][a * K + b] = m->Sigma[n][keep[a] * R + keep[b]];
                w->AA[n][a * K + b] = w->AA[n][keep[a] * R + keep[b]];
            }
    for (uint32_t a = 0; a < K; a++) m->lambda[a] = m->lambda[keep[a]];
    m->R = K;
    for (uint32_t n = 0; n < m->order; n++) expect(w, n);
    return FD_OK;
}

/* The sum of the entries of the Hadamard product of the N matrices G[n]
 * (R x R): ||[[A]]||^2 for Gram matrices, E||[[A]]||^2 for expected ones. */
static double hadamard_sum(double *const *G, uint32_t N, uint32_t R)
{
    double s = 0;
    for (uint32_t e = 0; e < R * R; e++) {
        double p = 1;
        for (uint32_t n = 0; n < N; n++) p *= G[n][e];
        s += p;
    }
    return s;
}

static fd_status trace_room(bcp_model *m)
{
    if (m->iters < m->cap) return FD_OK;
    const uint32_t cap = m->cap ? 2 * m->cap : 64;
    double *lb = realloc(m->lb, cap * sizeof *lb);
    if (lb) m->lb = lb;
    double *fit = realloc(m->fit, cap * sizeof *fit);
    if (fit) m->fit = fit;
    uint32_t *rk = realloc(m->ranks, cap * sizeof *rk);
    if (rk) m->ranks = rk;
    double *sec = realloc(m->seconds, cap * sizeof *sec);
    if (sec) m->seconds = sec;
    if (!lb || !fit || !rk || !sec) return fd_fail(FD_ERR_NOMEM, "out of memory");
    m->cap = cap;
    return FD_OK;
}

/* The scale of component r in mode n, s_nr, with the product over n
 * fixed at 1: A(n)[:, r] times s_nr, Sigma_n and E[A(n)^T A(n)] times
 * s_nr s_nr' at [r, r'].  The model's fit and E||Y - X||^2 do not change
 * (every product over the modes keeps its value); the bound changes by
 * sum_n (I_n ln s_nr - lambda_r s_nr^2 e_nr / 2), e_nr = E[A(n)^T A(n)][r, r],
 * which is concave in ln s and largest at s_nr^2 = (I_n - mu) / (lambda_r
 * e_nr), mu such that the product is 1.  Without this step the modes'
 * scales drift towards balance by a tiny ridge step per sweep and the
 * bound creeps up for thousands of sweeps; with it every sweep ends
 * balanced, and the bound still never decreases (the step maximises it
 * over the scales). */
void bcp_balance_scales(const bcp_model *m, double *const *EAA, double *sc)
{
    const uint32_t R = m->R, N = m->order;
    for (uint32_t r = 0; r < R; r++) {
        double e[BCP_MAX_ORDER], Imin = INFINITY;
        int ok = 1;
        for (uint32_t n = 0; n < N; n++) {
            e[n] = EAA[n][r * R + r];
            ok &= e[n] > 0;
            Imin = fmin(Imin, (double)m->dims[n]);
        }
        if (!ok) {
            for (uint32_t n = 0; n < N; n++) sc[n * R + r] = 1;
            continue;
        }
        /* g(mu) = sum_n ln(I_n - mu) - sum_n ln(lambda e_n) falls from
         * +inf to -inf on (-inf, min I_n), concave: Newton's method kept
         * inside a bracket [lo, hi] that bisects when a step leaves it
         * (some 6 steps against bisection's 60, each N logarithms). */
        double c = 0;
        for (uint32_t n = 0; n < N; n++) c += log(m->lambda[r] * e[n]);
        double lo = -1, hi = Imin;
        for (;;) {
            double g = -c;
            for (uint32_t n = 0; n < N; n++) g += log((double)m->dims[n] - lo);
            if (g > 0) break;
            lo = lo * 2 - 1;
            if (lo < -1e300) break;
        }
        double mu = lo;
        for (int it = 0; it < 200; it++) {
            double g = -c, dg = 0;
            for (uint32_t n = 0; n < N; n++) {
                g += log((double)m->dims[n] - mu);
                dg -= 1 / ((double)m->dims[n] - mu);
            }
            if (g > 0) lo = mu;
            else hi = mu;
            double next = mu - g / dg;
            if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
            if (next == mu || next == lo || next == hi) break;
            mu = next;
        }
        double logs[BCP_MAX_ORDER], mean = 0;
        for (uint32_t n = 0; n < N; n++) {
            logs[n] = 0.5 * log(((double)m->dims[n] - mu) / (m->lambda[r] * e[n]));
            mean += logs[n] / N;
        }
        /* The product exactly 1 despite mu's last bits. */
        for (uint32_t n = 0; n < N; n++) sc[n * R + r] = exp(logs[n] - mean);
    }
}

static fd_status rebalance(work *w)
{
    bcp_model *m = w->m;
    const uint32_t R = m->R, N = m->order;
    double sc[BCP_MAX_ORDER * 256];
    bcp_balance_scales(m, w->EAA, sc);
    for (uint32_t n = 0; n < N; n++) {
        const double *s = sc + n * R;
        for (uint32_t a = 0; a < R; a++)
            for (uint32_t b = 0; b < R; b++) {
                m->Sigma[n][a * R + b] *= s[a] * s[b];
                w->AA[n][a * R + b] *= s[a] * s[b];
            }
        expect(w, n);
        double ld = 0;
        for (uint32_t r = 0; r < R; r++) ld += 2 * log(s[r]);
        w->logdet[n] += ld;
    }
    return w->ops->scale(w->state, sc);
}

double bcp_update_precisions(bcp_model *m, double *const *EAA, const double *logdet, double M, double ee)
{
    const uint32_t R = m->R, N = m->order;
    /* lambda: Gamma(a, b_r). */
    double a = PRIOR, b[256];
    for (uint32_t n = 0; n < N; n++) a += 0.5 * (double)m->dims[n];
    for (uint32_t r = 0; r < R; r++) {
        double s = 0;
        for (uint32_t n = 0; n < N; n++) s += EAA[n][r * R + r];
        b[r] = PRIOR + 0.5 * s;
        m->lambda[r] = a / b[r];
    }
    /* tau: Gamma(c, d) over the M entries fitted. */
    const double c = PRIOR + 0.5 * M, d = PRIOR + 0.5 * ee;
    m->tau = c / d;
    /* The bound: E[ln p(Y, A, lambda, tau)] + the entropy of q.  lgamma_r:
     * lgamma writes the global signgam, a race wherever two fits run at
     * once. */
    int sg;
    const double ln2pi = log(2 * M_PI), eltau = digamma(c) - log(d);
    double L = -0.5 * M * ln2pi + 0.5 * M * eltau - 0.5 * m->tau * ee;
    L += PRIOR * log(PRIOR) - lgamma_r(PRIOR, &sg) + (PRIOR - 1) * eltau - PRIOR * m->tau;
    L += lgamma_r(c, &sg) - (c - 1) * digamma(c) - log(d) + c;
    for (uint32_t r = 0; r < R; r++) {
        const double ellam = digamma(a) - log(b[r]);
        for (uint32_t n = 0; n < N; n++)
            L += 0.5 * (double)m->dims[n] * ellam - 0.5 * m->lambda[r] * EAA[n][r * R + r];
        L += PRIOR * log(PRIOR) - lgamma_r(PRIOR, &sg) + (PRIOR - 1) * ellam - PRIOR * m->lambda[r];
        L += lgamma_r(a, &sg) - (a - 1) * digamma(a) - log(b[r]) + a;
    }
    for (uint32_t n = 0; n < N; n++) /* -(I_n R / 2) ln 2 pi of the prior and (I_n R / 2)(1 + ln 2 pi) of q */
        L += 0.5 * (double)m->dims[n] * (logdet[n] + (double)R);
    return L;
}

fd_status bcp_trace_push(bcp_model *m, double lb, double fit, double seconds)
{
    FD_TRY(trace_room(m));
    m->seconds[m->iters] = seconds;
    m->lb[m->iters] = lb;
    m->fit[m->iters] = fit;
    m->ranks[m->iters] = m->R;
    m->iters++;
    return FD_OK;
}

fd_status bcp_svd_factor(const bcp_tensor *t, uint32_t n, uint32_t R, double sd, int threads, fd_rng *rng, double *A)
{
    const uint64_t I = t->full[n];
    if (I > SVD_MAX) {
        for (uint64_t i = 0; i < I * R; i++) A[i] = sd * fd_rng_normal(rng);
        return FD_OK;
    }
    bcp_model m;
    work w;
    memset(&m, 0, sizeof m);
    memset(&w, 0, sizeof w);
    w.t = t;
    w.m = &m;
    w.threads = threads > 0 ? threads : 1;
    double *G = malloc(I * I * sizeof *G);
    if (!G) return fd_fail(FD_ERR_NOMEM, "out of memory for the SVD of mode %u", n + 1);
    fd_status st = mode_gram(&w, n, G);
    if (st == FD_OK) st = leading_eigen(G, I, R, t->order, sd, A, rng);
    free(G);
    return st;
}

/* ||x||^2 in blocks of SQUARES_BLOCK values, each summed on one thread
 * (four sums in turn, then theirs), the blocks' sums added in block
 * order: the bits depend on n alone.  One sum a value along 10^8 values
 * was half of a 100^4 tensor's fit on the GPU (0.1 s of its 0.15 s),
 * each add waiting for the last. */
#define SQUARES_BLOCK 65536

typedef struct {
    const double *x;
    uint64_t n;
    double *part;
} squares_ctx;

static fd_status squares_blocks(void *arg, uint64_t b0, uint64_t b1, int thread)
{
    const squares_ctx *c = arg;
    (void)thread;
    for (uint64_t b = b0; b < b1; b++) {
        const uint64_t i0 = b * SQUARES_BLOCK, i1 = i0 + SQUARES_BLOCK < c->n ? i0 + SQUARES_BLOCK : c->n;
        double s[4] = {0, 0, 0, 0};
        uint64_t i = i0;
        for (; i + 4 <= i1; i += 4)
            for (int q = 0; q < 4; q++) s[q] += c->x[i + q] * c->x[i + q];
        for (; i < i1; i++) s[0] += c->x[i] * c->x[i];
        c->part[b] = (s[0] + s[1]) + (s[2] + s[3]);
    }
    return FD_OK;
}

static fd_status sum_squares(const double *x, uint64_t n, int threads, double *out)
{
    const uint64_t blocks = (n + SQUARES_BLOCK - 1) / SQUARES_BLOCK;
    squares_ctx c = {x, n, calloc(blocks ? blocks : 1, sizeof(double))};
    if (!c.part) return fd_fail(FD_ERR_NOMEM, "out of memory");
    const fd_status st = par_rows_chunk(threads, 0, blocks, 16, squares_blocks, &c, NULL);
    double s = 0;
    for (uint64_t b = 0; b < blocks; b++) s += c.part[b];
    free(c.part);
    *out = s;
    return st;
}

/* A signal to stop (common/interrupt.h), agreed between the ranks
 * after every sweep, so that all leave the loop at the same sweep. */
static fd_status stop_requested(const bcp_comm *comm)
{
    double stop = fd_interrupted() != 0;
    if (comm && comm->sum) FD_TRY(comm->sum(comm->ctx, &stop, 1));
    if (stop == 0) return FD_OK;
    if (!fd_interrupted()) fd_interrupt_raise(SIGTERM); /* another rank's */
    return fd_interrupt_check();
}

static fd_status not_positive_definite(uint32_t n)
{
    return fd_fail(FD_ERR_INTERNAL, "bcp: tau Psi + diag(lambda) of mode %u is not positive definite", n + 1);
}

/* The modes' updates of a sweep on the backend's device, Sigma_n there
 * too (ops->sweep_modes); *done = 0 where it does not take this sweep. */
static fd_status sweep_on_device(work *w, const bcp_opts *o, double *yx, int *done)
{
    bcp_model *m = w->m;
    *done = 0;
    if (!w->ops->sweep_modes) return FD_OK;
    bcp_sweep_io io = {.tau = m->tau, .lambda = m->lambda, .nonneg = o->nonneg, .Sigma = m->Sigma, .AA = w->AA,
                       .EAA = w->EAA, .logdet = w->logdet};
    TIMED(w->ops->sweep_modes(w->state, w->comm, &io, done), m->product_seconds);
    if (*done && io.bad) return not_positive_definite(io.bad - 1);
    if (*done) *yx = io.yx;
    return FD_OK;
}

/* The modes' updates of a sweep, the R x R steps on the host; *yx = <Y,
 * [[A]]>. */
static fd_status sweep_on_host(work *w, const bcp_opts *o, double *yx)
{
    bcp_model *m = w->m;
    const bcp_tensor *t = w->t;
    const struct bcp_ops *ops = w->ops;
    void *const st = w->state;
    const uint32_t R = m->R, N = m->order;
    for (uint32_t n = 0; n < N; n++) {
        const uint64_t I = m->dims[n];
        const int side = bcp_sweep_contract_side(t, n);
        if (side >= 0) TIMED(ops->contract(st, side, w->threads), m->product_seconds);
        /* The block's MTTKRP and its sum over the ranks first: they do not
         * need Sigma_n, so that a device works on them while the host
         * inverts.  This rank's share of the rows (all of them on one
         * rank) is then updated; every rank gets every row; then the Gram
         * matrix, the same on every rank. */
        uint64_t o0 = 0, o1 = I;
        int whole = 1;
        TIMED(ops->mttkrp(st, n, w->threads), m->product_seconds);
        TIMED(ops->sum_rows(st, w->comm, n, &o0, &o1, &whole), m->sum_seconds);
        for (uint32_t e = 0; e < R * R; e++) w->psi[e] = 1;
        for (uint32_t k = 0; k < N; k++)
            if (k != n)
                for (uint32_t e = 0; e < R * R; e++) w->psi[e] *= w->EAA[k][e];
        for (uint32_t e = 0; e < R * R; e++) w->psi[e] *= m->tau;
        for (uint32_t r = 0; r < R; r++) w->psi[r * R + r] += m->lambda[r];
        if (!bcp_spd_inverse(w->psi, R, m->Sigma[n], &w->logdet[n])) return not_positive_definite(n);
        w->logdet[n] = -w->logdet[n]; /* ln det Sigma_n */
        /* --nonneg: the means projected on >= 0.  G-BF then makes the
         * columns unit vectors; here the scales are balanced across the
         * modes instead (rebalance, which keeps signs), since unit columns
         * in all modes but one fight the ARD prior: on amino they made
         * lambda shrink every component to nothing. */
        TIMED(ops->update(st, n, m->Sigma[n], m->tau, o->nonneg, o0, o1), m->product_seconds);
        if (!whole) TIMED(ops->gather_rows(st, w->comm, n), m->sum_seconds);
        /* With the last mode, <Y, [[A]]> from its MTTKRP and its new
         * factor: over this rank's rows, then summed over the ranks
         * (every rank has them all when whole). */
        TIMED(expect_gram(w, n, o0, o1, n == N - 1 ? yx : NULL), m->product_seconds);
        if (n == N - 1 && !whole) FD_TRY(reduce(w, yx, 1));
    }
    return FD_OK;
}

/* One sweep over the modes, then lambda, tau and the bound. */
static fd_status sweep(work *w, const bcp_opts *o, int balance, double *lb, double *fit)
{
    bcp_model *m = w->m;
    const bcp_tensor *t = w->t;
    const uint32_t R = m->R, N = m->order;
    double yx = 0;
    int done = 0;
    FD_TRY(sweep_on_device(w, o, &yx, &done));
    if (!done) FD_TRY(sweep_on_host(w, o, &yx));
    if (balance) FD_TRY(rebalance(w));
    /* tau: E||Y - X||^2 = ||Y||^2 - 2 <Y, [[A]]> + E||[[A]]||^2. */
    double *gram[BCP_MAX_ORDER];
    for (uint32_t n = 0; n < N; n++) gram[n] = w->EAA[n];
    const double M = (double)t->full_size, ee = fmax(0, w->yy - 2 * yx + hadamard_sum(gram, N, R));
    *lb = bcp_update_precisions(m, w->EAA, w->logdet, M, ee);
    /* The fit of the means: ||Y - [[A]]||^2 with A^T A instead of E[A^T A]. */
    const double res = fmax(0, w->yy - 2 * yx + hadamard_sum(w->AA, N, R));
    *fit = w->yy > 0 ? 1 - sqrt(res / w->yy) : 1;
    return FD_OK;
}

void bcp_model_free(bcp_model *m)
{
    for (uint32_t n = 0; n < BCP_MAX_ORDER; n++) {
        free(m->A[n]);
        free(m->Sigma[n]);
    }
    free(m->lambda);
    free(m->lb);
    free(m->fit);
    free(m->seconds);
    free(m->ranks);
    memset(m, 0, sizeof *m);
}

/* The model's and the work's arrays, R components of the tensor's modes. */
static fd_status fit_alloc(work *w, bcp_model *m, const bcp_tensor *t, uint32_t R)
{
    fd_status st = FD_OK;
    m->order = t->order;
    m->R = R;
    for (uint32_t n = 0; n < t->order; n++) {
        m->dims[n] = t->full[n];
        FD_ALLOC_GOTO(m->A[n], t->full[n] * R, st, done);
        FD_ALLOC_GOTO(m->Sigma[n], (size_t)R * R, st, done);
        FD_ALLOC_GOTO(w->AA[n], (size_t)R * R, st, done);
        FD_ALLOC_GOTO(w->EAA[n], (size_t)R * R, st, done);
    }
    FD_ALLOC_GOTO(m->lambda, R, st, done);
    FD_ALLOC_GOTO(w->psi, (size_t)R * R, st, done);
done:
    return st;
}

/* Start at the data's scale: factors from the SVD of each unfolding (or
 * Gaussian with entries of sd, so that a sum of R products of N has the
 * data's mean square), Sigma = 0 (the start taken as known), lambda from
 * the factors' power, tau the inverse mean square of the data.  A start
 * at unit scale (lambda = 1, entries N(0, 1)) let the prior shrink every
 * component of data of scale 100 to nothing.  Needs w->yy. */
static fd_status fit_start(work *w, const bcp_opts *o)
{
    fd_status st = FD_OK;
    const bcp_tensor *t = w->t;
    bcp_model *m = w->m;
    const uint32_t R = m->R, N = t->order;
    fd_rng rng = {o->seed};
    const double ms = w->yy / (double)t->full_size, sd = ms > 0 ? pow(ms / R, 0.5 / N) : 1;
    for (uint32_t n = 0; n < N; n++) {
        const uint64_t I = t->full[n];
        /* The SVD start costs I_n^2 memory (the mode's Gram) and about
         * I_n^2 (the Gram: I_n^2 times the other modes) plus I_n^3 / 3 (the
         * tridiagonal form) time: past SVD_MAX rows a mode starts random
         * instead. */
        if (o->init == BCP_INIT_SVD && I <= SVD_MAX) {
            double *G = malloc(I * I * sizeof *G);
            if (!G) return fd_fail(FD_ERR_NOMEM, "out of memory for the SVD of mode %u", n + 1);
            /* On the backend's device where it holds the block (the
             * block whole along n), else on the host's threads. */
            int done = 0;
            if (w->ops->mode_gram && t->dims[n] == I) st = w->ops->mode_gram(w->state, n, G, &done);
            if (st == FD_OK && !done) st = mode_gram(w, n, G);
            if (st == FD_OK) st = reduce(w, G, I * I);
            if (st == FD_OK) st = leading_eigen(G, I, R, N, sd, m->A[n], &rng);
            free(G);
            FD_TRY(st);
        } else {
            for (uint64_t i = 0; i < I * R; i++) m->A[n][i] = sd * fd_rng_normal(&rng);
        }
        /* A non-negative start for --nonneg: the singular vectors' (or the
         * Gaussian entries') magnitudes, which projection alone would
         * mostly zero. */
        if (o->nonneg)
            for (uint64_t i = 0; i < I * R; i++) m->A[n][i] = fabs(m->A[n][i]);
        memset(m->Sigma[n], 0, (size_t)R * R * sizeof *m->Sigma[n]);
    }
    /* The start to the backend, which holds the factors from here on. */
    FD_TRY(w->ops->put(w->state, (const double *const *)m->A, R));
    for (uint32_t n = 0; n < N; n++) FD_TRY(expect_gram(w, n, 0, 0, NULL));
    /* lambda_r by moments: E||a_r(n)||^2 = I_n / lambda_r summed over
     * the modes. */
    for (uint32_t r = 0; r < R; r++) {
        double rows = 0, power = 0;
        for (uint32_t n = 0; n < N; n++) {
            rows += (double)t->full[n];
            for (uint64_t i = 0; i < t->full[n]; i++) power += m->A[n][i * R + r] * m->A[n][i * R + r];
        }
        m->lambda[r] = power > 0 ? rows / power : 1 / (sd * sd);
    }
    m->tau = w->yy > 0 ? (double)t->full_size / w->yy : 1;
    return FD_OK;
}

/* The sweeps, each traced, until the bound converges with the scales
 * balanced, or o->max_iter. */
static fd_status fit_sweeps(work *w, const bcp_opts *o, fd_progress *prog)
{
    bcp_model *m = w->m;
    double prev = -INFINITY;
    m->product_seconds = m->sum_seconds = 0; /* the sweeps' only */
    uint32_t stable = 0; /* sweeps since the rank last changed */
    for (uint32_t it = 0; it < o->max_iter; it++) {
        /* BCPF prunes from the second sweep on. */
        const uint32_t before = m->R;
        uint32_t kept = m->R;
        if (it > 0) FD_TRY(prune(w, &kept));
        if (kept == 0) return fd_fail(FD_ERR_INPUT, "bcp: every component vanished (is the tensor all zeros?)");
        double lb = 0, fit = 0;
        if (before != m->R) stable = 0;
        /* Balancing from the start steers into poorer optima (on order-4
         * tests it killed a true component and ended far below the bound
         * the plain sweeps reach): only once the rank has held for a while. */
        const int balance = stable >= BALANCE_AFTER;
        const double t0 = fd_now();
        FD_TRY(sweep(w, o, balance, &lb, &fit));
        const double dt = fd_now() - t0;
        m->sweep_seconds += dt;
        stable++;
        FD_TRY(bcp_trace_push(m, lb, fit, dt));
        if (prog) fd_progress_add(prog, 1);
        FD_TRY(stop_requested(w->comm));
        /* Converged only once the scales are balanced, so that the result
         * does not depend on the path to it (the split of each
         * component's scale among the modes is otherwise free). */
        if (before == m->R && balance && fabs(lb - prev) <= o->tol * fabs(lb)) {
            m->converged = 1;
            return FD_OK;
        }
        prev = lb;
    }
    return FD_OK;
}

fd_status bcp_fit(const bcp_tensor *t, const bcp_opts *o, const bcp_comm *comm, const struct bcp_ops *ops, void *state,
                  bcp_model *m, fd_progress *prog)
{
    fd_status st = FD_OK;
    work w;
    memset(&w, 0, sizeof w);
    memset(m, 0, sizeof *m);
    const uint32_t R = o->rank, N = t->order;
    if (R < 1 || R > 256) return fd_fail(FD_ERR_USAGE, "--rank %u: 1 to 256", R);
    FD_TRY(bcp_lapack_load());
    w.t = t;
    w.threads = o->threads > 0 ? o->threads : 1;
    w.comm = comm;
    w.ops = ops;
    w.state = state;
    w.m = m;
    FD_TRY_GOTO(fit_alloc(&w, m, t, R), st, done);
    FD_TRY_GOTO(sum_squares(t->x, t->size, w.threads, &w.yy), st, done);
    FD_TRY_GOTO(reduce(&w, &w.yy, 1), st, done);
    FD_TRY_GOTO(fit_start(&w, o), st, done);
    FD_TRY_GOTO(fit_sweeps(&w, o, prog), st, done);
    st = ops->get(state, m->A);
done:
    for (uint32_t n = 0; n < N; n++) {
        free(w.AA[n]);
        free(w.EAA[n]);
    }
    free(w.psi);
    if (st != FD_OK) bcp_model_free(m);
    return st;
}
