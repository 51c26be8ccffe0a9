/* SPDX-License-Identifier: BSD-3-Clause */
/* The VB updates of bcp_masked.h.  For mode n and its row i, over the
 * observed entries e of the row's slice, with b_e the Hadamard product of
 * the other modes' rows at e (BCPF's eqs. 21-23 with the indicator O):
 *   Sigma_i = (tau sum_e E[b_e b_e^T] + diag(lambda))^-1,
 *   a_i     = tau Sigma_i sum_e y_e E[b_e],
 * E[b_e] the product of the rows' means and E[b_e b_e^T] that of their
 * second moments a a^T + Sigma (the factors are independent under q).
 * The rows of one mode depend only on the other modes, so they are
 * updated in parallel, each by one thread, the same bits for any number
 * of threads.  lambda, tau and the bound are bcp.c's, with E||Y - X||^2
 * summed over the observed entries and each row's own ln det Sigma.  A
 * backend's bcp_masked_dev takes the sums (B, v and the tau pass's) off
 * the host; the solves stay here. */
#include "bcp_masked.h"

#include "../common/clock.h"
#include "../common/interrupt.h"
#include "../common/par_rows.h"
#include "bcp_lapack.h"
#include "chol.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* R x R symmetric matrices are kept packed: the upper triangle row by
 * row, (a, b) for a <= b. */
static uint32_t packed(uint32_t R) { return R * (R + 1) / 2; }

typedef struct {
    const bcp_tensor *t;
    bcp_model *m;
    uint32_t N, R, P;           /* P = packed(R) */
    double *E[BCP_MAX_ORDER];   /* I_n x P: each row's second moment a a^T + Sigma */
    double *ld[BCP_MAX_ORDER];  /* I_n: ln det of each row's Sigma */
    double *sums;               /* I_0 x 3: the tau pass's sums per row of mode 0 */
    uint32_t n;                 /* the mode being updated */
    int threads;
    const bcp_comm *comm;       /* several ranks, or NULL */
    int nonneg;                 /* --nonneg */
    /* The sums on a device (NULL: slice_sums on the host): its rows' B
     * and v of the mode being updated (I x P, I x R, the longest mode's
     * rows), X the tau pass's sums of the means' outer products and yy0
     * each mode-0 row's sum of y^2 (I_0 each); dev_R: the rank at which
     * the device holds every mode (0: none yet). */
    const bcp_masked_dev *dev;
    void *ds;
    double *Bs, *vs, *Xs, *yy0;
    uint32_t dev_R;
} mwork;

static int shared(const mwork *w) { return w->comm && w->comm->share; }

/* This rank's rows of `rows`. */
static void my_rows(const mwork *w, uint64_t rows, uint64_t *o0, uint64_t *o1)
{
    if (shared(w)) {
        w->comm->share(w->comm->ctx, rows, o0, o1);
    } else {
        *o0 = 0;
        *o1 = rows;
    }
}

/* local, agreed by every rank (itself with one). */
static fd_status agreed(const mwork *w, fd_status local)
{
    return shared(w) ? w->comm->agree(w->comm->ctx, local) : local;
}

/* Mode n's rows as every rank updated its share: their means, moments
 * and ln dets from their owners. */
static fd_status gather_mode(const mwork *w, uint32_t n, fd_status local)
{
    FD_TRY(agreed(w, local));
    if (!shared(w)) return FD_OK;
    const uint64_t I = w->t->dims[n];
    FD_TRY(w->comm->gather_rows(w->comm->ctx, w->m->A[n], I, w->R));
    FD_TRY(w->comm->gather_rows(w->comm->ctx, w->E[n], I, w->P));
    return w->comm->gather_rows(w->comm->ctx, w->ld[n], I, 1);
}

/* Mode n's rows to the device, or every mode's. */
static fd_status put_mode(mwork *w, uint32_t n)
{
    return w->dev->put(w->ds, n, w->m->A[n], w->E[n], w->R);
}

static fd_status put_all(mwork *w)
{
    for (uint32_t n = 0; n < w->N; n++) FD_TRY(put_mode(w, n));
    w->dev_R = w->R;
    return FD_OK;
}

/* h *= a (R), H *= S (packed): one more mode's row in the products. */
static void times_row(double *h, double *H, const double *a, const double *S, uint32_t R, uint32_t P)
{
    for (uint32_t r = 0; r < R; r++) h[r] *= a[r];
    for (uint32_t p = 0; p < P; p++) H[p] *= S[p];
}

/* Over the observed entries of row i of mode n.  own = 0: B (packed) +=
 * the product of the other modes' second moments, v += y times that of
 * their means.  own = 1 (the tau pass): row i's own factors are in the
 * products too, and sums[0..3) += E(y - x)^2, (y - E x)^2, y^2.
 * The sums run along fibres of one more mode z (the last mode that is
 * not n), whose products with the rest are taken once a fibre: B +=
 * H_rest (Hadamard) sum_k E_z[k], v += h_rest (Hadamard) sum_k y_k a_z[k],
 * an add per packed entry per observed entry instead of N - 1 products
 * (bench/results/bcp-missing.csv, before and after).  scratch: 2 R + 2 P
 * doubles. */
static void slice_sums(const mwork *w, uint32_t n, uint64_t i, int own, double *B, double *v, double *sums,
                       double *scratch)
{
    const bcp_tensor *t = w->t;
    double *const *A = w->m->A;
    const uint32_t N = w->N, R = w->R, P = w->P, z = n == N - 1 ? N - 2 : N - 1;
    const uint64_t Iz = t->dims[z];
    double *hm = scratch, *Hm = hm + R, *Sz = Hm + P, *vz = Sz + P;
    uint64_t stride[BCP_MAX_ORDER], idx[BCP_MAX_ORDER] = {0};
    stride[N - 1] = 1;
    for (uint32_t k = N - 1; k > 0; k--) stride[k - 1] = stride[k] * t->dims[k];
    const uint64_t fibres = t->size / (t->dims[n] * Iz);
    for (uint64_t f = 0; f < fibres; f++) {
        if (f > 0) /* the modes other than n and z count up, the last fastest */
            for (uint32_t k = N; k-- > 0;) {
                if (k == n || k == z) continue;
                if (++idx[k] < t->dims[k]) break;
                idx[k] = 0;
            }
        uint64_t base = i * stride[n];
        for (uint32_t r = 0; r < R; r++) hm[r] = 1;
        for (uint32_t p = 0; p < P; p++) Hm[p] = 1;
        for (uint32_t k = 0; k < N; k++) {
            if (k == n || k == z) continue;
            base += idx[k] * stride[k];
            times_row(hm, Hm, A[k] + idx[k] * R, w->E[k] + idx[k] * P, R, P);
        }
        if (own) times_row(hm, Hm, A[n] + i * R, w->E[n] + i * P, R, P);
        memset(Sz, 0, P * sizeof *Sz);
        memset(vz, 0, R * sizeof *vz);
        double yy = 0, yx = 0, res = 0;
        int any = 0;
        for (uint64_t k = 0; k < Iz; k++) {
            const uint64_t e = base + k * stride[z];
            if (!t->observed[e]) continue;
            const double y = t->x[e], *a = A[z] + k * R, *E = w->E[z] + k * P;
            any = 1;
            for (uint32_t p = 0; p < P; p++) Sz[p] += E[p];
            if (!own) {
                for (uint32_t r = 0; r < R; r++) vz[r] += y * a[r];
                continue;
            }
            double x = 0;
            for (uint32_t r = 0; r < R; r++) x += hm[r] * a[r];
            yy += y * y;
            yx += y * x;
            res += (y - x) * (y - x);
        }
        if (!any) continue;
        if (!own) {
            for (uint32_t p = 0; p < P; p++) B[p] += Hm[p] * Sz[p];
            for (uint32_t r = 0; r < R; r++) v[r] += hm[r] * vz[r];
            continue;
        }
        double ex2 = 0;
        for (uint32_t a = 0, p = 0; a < R; a++)
            for (uint32_t b = a; b < R; b++, p++) ex2 += (a == b ? 1 : 2) * Hm[p] * Sz[p];
        sums[0] += yy - 2 * yx + ex2;
        sums[1] += res;
        sums[2] += yy;
    }
}

/* Rows [i0, i1) of mode w->n: their covariances, means and moments. */
static fd_status update_rows(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    mwork *w = arg;
    (void)thread;
    const uint32_t n = w->n, R = w->R, P = w->P;
    const bcp_model *m = w->m;
    fd_status st = FD_OK;
    double *buf = malloc(((size_t)4 * P + 3 * R + 2 * (size_t)R * R) * sizeof *buf);
    if (!buf) return fd_fail(FD_ERR_NOMEM, "out of memory");
    double *B = buf, *v = B + P, *scratch = v + R, *psi = scratch + 2 * R + 2 * P, *S = psi + (size_t)R * R;
    for (uint64_t i = i0; i < i1 && st == FD_OK; i++) {
        if (w->dev) { /* summed on the device already */
            B = w->Bs + i * P;
            v = w->vs + i * R;
        } else {
            memset(B, 0, P * sizeof *B);
            memset(v, 0, R * sizeof *v);
            slice_sums(w, n, i, 0, B, v, NULL, scratch);
        }
        for (uint32_t a = 0, p = 0; a < R; a++)
            for (uint32_t b = a; b < R; b++, p++) psi[a * R + b] = psi[b * R + a] = m->tau * B[p];
        for (uint32_t r = 0; r < R; r++) psi[r * R + r] += m->lambda[r];
        double ld;
        if (!bcp_spd_inverse(psi, R, S, &ld)) {
            st = fd_fail(FD_ERR_INTERNAL, "bcp: the precision of row %llu of mode %u is not positive definite",
                         (unsigned long long)i, n + 1);
            break;
        }
        w->ld[n][i] = -ld;
        double *a = m->A[n] + i * R, *e = w->E[n] + i * P;
        for (uint32_t r = 0; r < R; r++) {
            double s = 0;
            for (uint32_t c = 0; c < R; c++) s += S[r * R + c] * v[c];
            a[r] = m->tau * s;
            /* --nonneg: the mean projected on >= 0, as the dense fit's
             * (bcp.c; not a VB step), its moment from the projected mean. */
            if (w->nonneg && a[r] < 0) a[r] = 0;
        }
        for (uint32_t x = 0, p = 0; x < R; x++)
            for (uint32_t y = x; y < R; y++, p++) e[p] = a[x] * a[y] + S[x * R + y];
    }
    free(buf);
    return st;
}

/* The tau pass over rows [i0, i1) of mode 0. */
static fd_status residual_rows(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    mwork *w = arg;
    (void)thread;
    double *scratch = malloc((2 * (size_t)w->R + 2 * (size_t)w->P) * sizeof *scratch);
    if (!scratch) return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (uint64_t i = i0; i < i1; i++) {
        double *s = w->sums + 3 * i;
        s[0] = s[1] = s[2] = 0;
        slice_sums(w, 0, i, 1, NULL, NULL, s, scratch);
    }
    free(scratch);
    return FD_OK;
}

/* The tau pass's sums of rows [i0, i1) of mode 0 from the device's: with
 * B and v mode 0's sums from the updated modes and X those of the means'
 * outer products, a row's E(y - x)^2 = yy - 2 <v, a> + <E, B>, (y - E x)^2
 * = yy - 2 <v, a> + <a a^T, X> (the packed triangles' off-diagonal terms
 * twice). */
static fd_status residual_dev(mwork *w, uint64_t i0, uint64_t i1)
{
    const uint32_t R = w->R, P = w->P;
    FD_TRY(w->dev->sums(w->ds, 0, 0, i0, i1, w->Bs, w->vs));
    FD_TRY(w->dev->sums(w->ds, 0, 1, i0, i1, w->Xs, NULL));
    for (uint64_t i = i0; i < i1; i++) {
        const double *a = w->m->A[0] + i * R, *E = w->E[0] + i * P, *B = w->Bs + i * P, *X = w->Xs + i * P,
                     *v = w->vs + i * R;
        double yx = 0, ex2 = 0, xx = 0;
        for (uint32_t r = 0; r < R; r++) yx += v[r] * a[r];
        for (uint32_t x = 0, p = 0; x < R; x++)
            for (uint32_t y = x; y < R; y++, p++) {
                const double c = x == y ? 1 : 2;
                ex2 += c * E[p] * B[p];
                xx += c * a[x] * a[y] * X[p];
            }
        double *s = w->sums + 3 * i;
        s[0] = w->yy0[i] - 2 * yx + ex2;
        s[1] = w->yy0[i] - 2 * yx + xx;
        s[2] = w->yy0[i];
    }
    return FD_OK;
}

/* EAA[n] (R x R) = the sum of mode n's rows' second moments, in row
 * order (the same bits for any threads); *logdet: the rows' mean ln det. */
static void mode_sums(const mwork *w, uint32_t n, double *EAA, double *logdet)
{
    const uint32_t R = w->R, P = w->P;
    const uint64_t I = w->t->dims[n];
    memset(EAA, 0, (size_t)R * R * sizeof *EAA);
    double ld = 0;
    for (uint64_t i = 0; i < I; i++) {
        const double *e = w->E[n] + i * P;
        for (uint32_t a = 0, p = 0; a < R; a++)
            for (uint32_t b = a; b < R; b++, p++) EAA[a * R + b] += e[p];
        ld += w->ld[n][i];
    }
    for (uint32_t a = 0; a < R; a++)
        for (uint32_t b = 0; b < a; b++) EAA[a * R + b] = EAA[b * R + a];
    *logdet = ld / (double)I;
}

/* Each component's scales balanced across the modes (bcp.c's rebalance,
 * the same step: the products, so the likelihood, do not change, and the
 * bound is maximised over the scales): the means' columns, the rows'
 * moments and ln dets, and the sums from them. */
static void rebalance(mwork *w, double *EAA[BCP_MAX_ORDER], double *logdet)
{
    bcp_model *m = w->m;
    const uint32_t R = w->R, P = w->P;
    double sc[BCP_MAX_ORDER * 256];
    bcp_balance_scales(m, EAA, sc);
    for (uint32_t n = 0; n < w->N; n++) {
        const double *s = sc + n * R;
        double ld = 0;
        for (uint32_t r = 0; r < R; r++) ld += 2 * log(s[r]);
        for (uint64_t i = 0; i < w->t->dims[n]; i++) {
            for (uint32_t r = 0; r < R; r++) m->A[n][i * R + r] *= s[r];
            for (uint32_t a = 0, p = 0; a < R; a++)
                for (uint32_t b = a; b < R; b++, p++) w->E[n][i * P + p] *= s[a] * s[b];
            w->ld[n][i] += ld;
        }
        mode_sums(w, n, EAA[n], &logdet[n]);
    }
}

/* One sweep: every mode's rows, then lambda, tau, the bound and the fit. */
static fd_status sweep(mwork *w, int balance, double *EAA[BCP_MAX_ORDER], double *lb, double *fit)
{
    const bcp_tensor *t = w->t;
    double logdet[BCP_MAX_ORDER];
    uint64_t o0, o1;
    if (w->dev && w->dev_R != w->R) FD_TRY(agreed(w, put_all(w))); /* the start, or pruned */
    for (uint32_t n = 0; n < w->N; n++) {
        w->n = n;
        my_rows(w, t->dims[n], &o0, &o1);
        fd_status st = w->dev ? w->dev->sums(w->ds, n, 0, o0, o1, w->Bs, w->vs) : FD_OK;
        if (st == FD_OK) st = par_rows_chunk(w->threads, o0, o1, 1, update_rows, w, NULL);
        FD_TRY(gather_mode(w, n, st));
        if (w->dev) FD_TRY(agreed(w, put_mode(w, n)));
    }
    for (uint32_t n = 0; n < w->N; n++) mode_sums(w, n, EAA[n], &logdet[n]);
    if (balance) rebalance(w, EAA, logdet);
    if (balance && w->dev) FD_TRY(agreed(w, put_all(w)));
    my_rows(w, t->dims[0], &o0, &o1);
    FD_TRY(agreed(w, w->dev ? residual_dev(w, o0, o1) : par_rows_chunk(w->threads, o0, o1, 1, residual_rows, w, NULL)));
    if (shared(w)) FD_TRY(w->comm->gather_rows(w->comm->ctx, w->sums, t->dims[0], 3));
    double ee = 0, res = 0, yy = 0;
    for (uint64_t i = 0; i < t->dims[0]; i++) {
        ee += w->sums[3 * i];
        res += w->sums[3 * i + 1];
        yy += w->sums[3 * i + 2];
    }
    *lb = bcp_update_precisions(w->m, EAA, logdet, (double)t->n_observed, fmax(0, ee));
    /* fmax: the device's res is a difference of sums (residual_dev). */
    *fit = yy > 0 ? 1 - sqrt(fmax(0, res) / yy) : 1;
    return FD_OK;
}

/* Drops the components whose power vanished (bcp_components_kept), from
 * the factors, the moments and lambda. */
static fd_status prune(mwork *w)
{
    bcp_model *m = w->m;
    const uint32_t R = w->R, P = w->P;
    double power[256] = {0};
    uint64_t rows = 0;
    for (uint32_t n = 0; n < w->N; n++) {
        rows += w->t->dims[n];
        for (uint64_t i = 0; i < w->t->dims[n]; i++)
            for (uint32_t r = 0; r < R; r++) power[r] += m->A[n][i * R + r] * m->A[n][i * R + r];
    }
    uint32_t keep[256];
    const uint32_t K = bcp_components_kept(power, R, rows, keep);
    if (K == R || K == 0) {
        m->R = K;
        return FD_OK;
    }
    /* In place, in order: every value moves to an earlier or equal place
     * (keep[a] >= a, and a packed index grows with both of its own). */
    uint32_t *at = malloc((size_t)packed(K) * sizeof *at), Q = 0;
    if (!at) return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (uint32_t a = 0; a < K; a++)
        for (uint32_t b = a; b < K; b++) at[Q++] = keep[a] * R - keep[a] * (keep[a] + 1) / 2 + keep[b];
    for (uint32_t n = 0; n < w->N; n++)
        for (uint64_t i = 0; i < w->t->dims[n]; i++) {
            for (uint32_t r = 0; r < K; r++) m->A[n][i * K + r] = m->A[n][i * R + keep[r]];
            for (uint32_t q = 0; q < Q; q++) w->E[n][i * Q + q] = w->E[n][i * P + at[q]];
        }
    for (uint32_t r = 0; r < K; r++) m->lambda[r] = m->lambda[keep[r]];
    m->R = w->R = K;
    w->P = Q;
    free(at);
    return FD_OK;
}

/* The start: each mode's SVD start of the tensor with its missing entries
 * at 0 (BCPF's), rescaled by the observed fraction, or Gaussian; Sigma 0;
 * lambda and tau as bcp_fit starts them. */
static fd_status start(mwork *w, const bcp_opts *o, double yy)
{
    const bcp_tensor *t = w->t;
    bcp_model *m = w->m;
    const uint32_t R = w->R, N = w->N, P = w->P;
    fd_rng rng = {o->seed};
    const double ms = yy / (double)t->n_observed, sd = ms > 0 ? pow(ms / R, 0.5 / N) : 1;
    /* Zero-filled, the unfolding's Gram is about the observed fraction f
     * of the full one, its vectors f^(1/2N) short. */
    const double grow = pow((double)t->size / (double)t->n_observed, 0.5 / N);
    const bcp_model *f = o->from;
    if (f && (f->R != R + 1 || o->drop >= f->R || f->order != N))
        return fd_fail(FD_ERR_INTERNAL, "bcp_fit_masked: a start of rank %u from a model of rank %u", R, f->R);
    for (uint32_t n = 0; n < N; n++) {
        const uint64_t I = t->dims[n];
        if (f) {
            for (uint64_t i = 0; i < I; i++)
                for (uint32_t a = 0, b = 0; b < f->R; b++)
                    if (b != o->drop) m->A[n][i * R + a++] = f->A[n][i * f->R + b];
        } else if (o->init == BCP_INIT_SVD) {
            FD_TRY(bcp_svd_factor(t, n, R, sd, w->threads, &rng, m->A[n]));
            for (uint64_t q = 0; q < I * R; q++) m->A[n][q] *= grow;
        } else {
            for (uint64_t q = 0; q < I * R; q++) m->A[n][q] = sd * fd_rng_normal(&rng);
        }
        /* --nonneg: the magnitudes, as the dense fit starts (a model to
         * start from is non-negative already). */
        if (w->nonneg && !f)
            for (uint64_t q = 0; q < I * R; q++) m->A[n][q] = fabs(m->A[n][q]);
        for (uint64_t i = 0; i < I; i++)
            for (uint32_t a = 0, p = 0; a < R; a++)
                for (uint32_t b = a; b < R; b++, p++) w->E[n][i * P + p] = m->A[n][i * R + a] * m->A[n][i * R + b];
    }
    for (uint32_t r = 0; r < R; r++) {
        double rows = 0, power = 0;
        for (uint32_t n = 0; n < N; n++) {
            rows += (double)t->dims[n];
            for (uint64_t i = 0; i < t->dims[n]; i++) power += m->A[n][i * R + r] * m->A[n][i * R + r];
        }
        m->lambda[r] = power > 0 ? rows / power : 1 / (sd * sd);
    }
    m->tau = yy > 0 ? (double)t->n_observed / yy : 1;
    if (f) {
        for (uint32_t a = 0, b = 0; b < f->R; b++)
            if (b != o->drop) m->lambda[a++] = f->lambda[b];
        m->tau = f->tau;
    }
    return FD_OK;
}

/* Rank 0's start to every rank: the SVD's bits may depend on the threads. */
static fd_status share_start(const mwork *w)
{
    if (!shared(w)) return FD_OK;
    for (uint32_t n = 0; n < w->N; n++) {
        FD_TRY(w->comm->bcast(w->comm->ctx, w->m->A[n], w->t->dims[n] * w->R));
        FD_TRY(w->comm->bcast(w->comm->ctx, w->E[n], w->t->dims[n] * w->P));
    }
    FD_TRY(w->comm->bcast(w->comm->ctx, w->m->lambda, w->R));
    return w->comm->bcast(w->comm->ctx, &w->m->tau, 1);
}

fd_status bcp_fit_masked(const bcp_tensor *t, const bcp_opts *o, const bcp_comm *comm, const bcp_masked_dev *dev,
                         void *dev_state, bcp_model *m, fd_progress *prog)
{
    fd_status st = FD_OK;
    const uint32_t R = o->rank, N = t->order;
    mwork w;
    double *EAA[BCP_MAX_ORDER] = {0};
    memset(&w, 0, sizeof w);
    memset(m, 0, sizeof *m);
    if (R < 1 || R > 256) return fd_fail(FD_ERR_USAGE, "--rank %u: 1 to 256", R);
    FD_TRY(bcp_lapack_load());
    if (!t->observed || t->n_observed == 0)
        return fd_fail(FD_ERR_INTERNAL, "bcp_fit_masked: a tensor without missing entries");
    for (uint32_t n = 0; n < N; n++)
        if (t->dims[n] != t->full[n]) return fd_fail(FD_ERR_INTERNAL, "bcp_fit_masked: a block, not the whole tensor");
    w.t = t;
    w.m = m;
    w.N = N;
    w.R = R;
    w.P = packed(R);
    w.threads = o->threads > 0 ? o->threads : 1;
    w.nonneg = o->nonneg;
    w.comm = comm && comm->share && comm->gather_rows && comm->bcast && comm->agree ? comm : NULL;
    m->order = N;
    m->R = R;
    for (uint32_t n = 0; n < N; n++) {
        m->dims[n] = t->dims[n];
        FD_ALLOC_GOTO(m->A[n], t->dims[n] * R, st, early);
        FD_ALLOC_GOTO(m->Sigma[n], (size_t)R * R, st, early);
        FD_ALLOC_GOTO(w.E[n], t->dims[n] * w.P, st, early);
        FD_ALLOC_GOTO(w.ld[n], t->dims[n], st, early);
        FD_ALLOC_GOTO(EAA[n], (size_t)R * R, st, early);
    }
    FD_ALLOC_GOTO(m->lambda, R, st, early);
    FD_ALLOC_GOTO(w.sums, 3 * t->dims[0], st, early);
    if (dev && dev_state) {
        uint64_t Imax = 0;
        for (uint32_t n = 0; n < N; n++) Imax = t->dims[n] > Imax ? t->dims[n] : Imax;
        w.dev = dev;
        w.ds = dev_state;
        FD_ALLOC_GOTO(w.Bs, Imax * w.P, st, early);
        FD_ALLOC_GOTO(w.vs, Imax * R, st, early);
        FD_ALLOC_GOTO(w.Xs, t->dims[0] * w.P, st, early);
        FD_ALLOC_GOTO(w.yy0, t->dims[0], st, early);
        const uint64_t S = t->size / t->dims[0];
        for (uint64_t i = 0; i < t->dims[0]; i++) {
            double s = 0;
            for (uint64_t e = i * S; e < (i + 1) * S; e++) s += t->x[e] * t->x[e];
            w.yy0[i] = s;
        }
    }
    double yy = 0;
    for (uint64_t e = 0; e < t->size; e++) yy += t->x[e] * t->x[e]; /* 0 where missing */
    FD_TRY_GOTO(agreed(&w, start(&w, o, yy)), st, done);
    FD_TRY_GOTO(share_start(&w), st, done);
    double prev = -INFINITY;
    uint32_t stable = 0; /* sweeps since the rank last changed */
    for (uint32_t it = 0; it < o->max_iter; it++) {
        const uint32_t before = m->R;
        if (it > 0) FD_TRY_GOTO(agreed(&w, prune(&w)), st, done); /* BCPF prunes from the second sweep on */
        if (m->R == 0) {
            st = fd_fail(FD_ERR_INPUT, "bcp: every component vanished (are the observed entries all zeros?)");
            goto done;
        }
        if (before != m->R) stable = 0;
        /* Balanced only once the rank has held a while, and converged only
         * balanced, as bcp_fit (bcp.c, fit_sweeps, says why). */
        const int balance = stable >= BCP_BALANCE_AFTER;
        double lb, fit;
        const double t0 = fd_now();
        FD_TRY_GOTO(sweep(&w, balance, EAA, &lb, &fit), st, done);
        stable++;
        const double dt = fd_now() - t0;
        m->sweep_seconds += dt;
        FD_TRY_GOTO(agreed(&w, bcp_trace_push(m, lb, fit, dt)), st, done);
        if (prog) fd_progress_add(prog, 1);
        /* A signal on any rank stops every rank after the same sweep. */
        FD_TRY_GOTO(agreed(&w, fd_interrupted() ? fd_interrupt_check() : FD_OK), st, done);
        if (before == m->R && balance && fabs(lb - prev) <= o->tol * fabs(lb)) {
            m->converged = 1;
            break;
        }
        prev = lb;
    }
    /* Sigma[n]: the mean of the rows' covariances, E[A^T A] - A^T A over I_n. */
    for (uint32_t n = 0; n < N; n++) {
        const uint32_t K = m->R;
        double ld;
        mode_sums(&w, n, EAA[n], &ld);
        for (uint32_t a = 0; a < K; a++)
            for (uint32_t b = 0; b < K; b++) {
                double aa = 0;
                for (uint64_t i = 0; i < t->dims[n]; i++) aa += m->A[n][i * K + a] * m->A[n][i * K + b];
                m->Sigma[n][a * K + b] = (EAA[n][a * K + b] - aa) / (double)t->dims[n];
            }
    }
    goto done;
early: /* a rank without its memory: every rank stops here */
    st = agreed(&w, st);
done:
    for (uint32_t n = 0; n < N; n++) {
        free(w.E[n]);
        free(w.ld[n]);
        free(EAA[n]);
    }
    free(w.sums);
    free(w.Bs);
    free(w.vs);
    free(w.Xs);
    free(w.yy0);
    if (st != FD_OK) bcp_model_free(m);
    return st;
}

double bcp_model_at(const bcp_model *m, uint64_t e)
{
    uint64_t idx[BCP_MAX_ORDER];
    for (uint32_t n = m->order; n-- > 0;) {
        idx[n] = e % m->dims[n];
        e /= m->dims[n];
    }
    return bcp_model_entry(m, idx);
}

double bcp_model_entry(const bcp_model *m, const uint64_t *idx)
{
    double x = 0;
    for (uint32_t r = 0; r < m->R; r++) {
        double p = 1;
        for (uint32_t n = 0; n < m->order; n++) p *= m->A[n][idx[n] * m->R + r];
        x += p;
    }
    return x;
}
