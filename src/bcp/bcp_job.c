/* SPDX-License-Identifier: BSD-3-Clause */
/* The bcp run (see bcp_job.h).  The ranks form a process grid over the
 * tensor's modes (P = P_1 x ... x P_N); each reads and keeps its block
 * only, and every rank holds every factor (they are small: sum_n I_n x
 * R).  Per mode, each rank's MTTKRP of its block fills its rows of the
 * product; a reduce-scatter sums each rank's share of the rows, the rank
 * updates those rows of the factor, and an all-gather hands them to
 * everyone (each entry is summed at one rank only, so every rank gets the
 * same bits and the update after it is the same everywhere).  ||Y||^2,
 * the R x R Gram matrices and the SVD start's mode Grams are sums over
 * all ranks (a reduction and a broadcast). */
#include "bcp_job.h"

#include "../common/clock.h"
#include "../job/job.h"
#include "bcp_backend.h"
#include "bcp_fuse.h"
#include "bcp_h5.h"
#include "bcp_masked.h"
#include "bcp_predict.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The ranks per mode: P's prime factors, largest first, each to the mode
 * with the most slices per rank that can take it. */
static fd_status process_grid(int P, uint32_t order, const uint64_t *dims, uint64_t *grid)
{
    for (uint32_t n = 0; n < order; n++) grid[n] = 1;
    int rest = P, primes[64], np = 0;
    for (int p = 2; p * p <= rest; p++)
        while (rest % p == 0) {
            primes[np++] = p;
            rest /= p;
        }
    if (rest > 1) primes[np++] = rest;
    for (int k = np; k-- > 0;) { /* largest first: trial division found them ascending */
        int best = -1;
        for (uint32_t n = 0; n < order; n++)
            if (grid[n] * (uint64_t)primes[k] <= dims[n] &&
                (best < 0 || (double)dims[n] / grid[n] > (double)dims[best] / grid[best]))
                best = (int)n;
        if (best < 0) return fd_fail(FD_ERR_USAGE, "%d ranks: more than the tensor's slices can be split among", P);
        grid[best] *= (uint64_t)primes[k];
    }
    return FD_OK;
}

/* bcp_comm's sum: a reduction to rank 0 and a broadcast (an all-reduce
 * may leave the ranks with different last bits). */
static fd_status mpi_sum(void *ctx, double *v, uint64_t n)
{
    fd_status st = FD_OK;
    const int rank = *(const int *)ctx;
    for (uint64_t a = 0; a < n; a += 1u << 28) {
        const int k = (int)(n - a < (1u << 28) ? n - a : 1u << 28);
        MPI_CHECK_GOTO(MPI_Reduce(rank == 0 ? MPI_IN_PLACE : v + a, v + a, k, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD), st,
                       done);
        MPI_CHECK_GOTO(MPI_Bcast(v + a, k, MPI_DOUBLE, 0, MPI_COMM_WORLD), st, done);
    }
done:
    return st;
}

/* The grid's communicators: per mode, the ranks that hold the same
 * blocks of every other mode (a fiber of the grid along that mode), in
 * the order of their blocks of it, and each one's rows of that mode. */
typedef struct {
    int rank, size;
    MPI_Comm fiber[BCP_MAX_ORDER];
    int *rows[BCP_MAX_ORDER], *counts, *displs;
    double *share; /* sum_rows' receive buffer */
    uint64_t share_cap;
} grid_comm;

static void grid_comm_free(grid_comm *g)
{
    for (uint32_t n = 0; n < BCP_MAX_ORDER; n++) {
        if (g->fiber[n] != MPI_COMM_NULL && fd_mpi_active()) MPI_Comm_free(&g->fiber[n]);
        g->fiber[n] = MPI_COMM_NULL;
        free(g->rows[n]);
        g->rows[n] = NULL;
    }
    free(g->counts);
    free(g->displs);
    free(g->share);
    g->counts = g->displs = NULL;
    g->share = NULL;
}

/* The ranks without fibers: the row shares of MPI_COMM_WORLD alone (the
 * masked fit's, where every rank holds the whole tensor). */
static fd_status grid_comm_flat(grid_comm *g, int rank, int size)
{
    fd_status st = FD_OK;
    memset(g, 0, sizeof *g);
    g->rank = rank;
    g->size = size;
    for (uint32_t n = 0; n < BCP_MAX_ORDER; n++) g->fiber[n] = MPI_COMM_NULL;
    FD_ALLOC_GOTO(g->counts, (size_t)size, st, done);
    FD_ALLOC_GOTO(g->displs, (size_t)size, st, done);
done:
    if (st != FD_OK) grid_comm_free(g);
    return st;
}

/* Rank `rank`'s block (C order over the grid, as bcp_grid_block). */
static fd_status grid_comm_open(grid_comm *g, int rank, int size, uint32_t order, const uint64_t *grid,
                                const uint64_t *cnt)
{
    FD_TRY(grid_comm_flat(g, rank, size));
    fd_status st = FD_OK;
    uint64_t coord[BCP_MAX_ORDER], stride[BCP_MAX_ORDER], v = (uint64_t)rank, s = 1;
    for (uint32_t n = order; n-- > 0;) {
        coord[n] = v % grid[n];
        v /= grid[n];
        stride[n] = s;
        s *= grid[n];
    }
    for (uint32_t n = 0; n < order; n++) {
        const int color = (int)((uint64_t)rank - coord[n] * stride[n]), mine = (int)cnt[n];
        MPI_CHECK_GOTO(MPI_Comm_split(MPI_COMM_WORLD, color, (int)coord[n], &g->fiber[n]), st, done);
        FD_ALLOC_GOTO(g->rows[n], grid[n], st, done);
        MPI_CHECK_GOTO(MPI_Allgather(&mine, 1, MPI_INT, g->rows[n], 1, MPI_INT, g->fiber[n]), st, done);
    }
done:
    if (st != FD_OK) grid_comm_free(g);
    return st;
}

/* bcp_comm's sum: a reduction to rank 0 and a broadcast (an all-reduce
 * may leave the ranks with different last bits). */
static fd_status grid_sum(void *ctx, double *v, uint64_t n)
{
    return mpi_sum(&((grid_comm *)ctx)->rank, v, n);
}

/* bcp_comm's gather: the fiber's rows of `cols` doubles, in block order
 * (GRAM_CHUNK in bcp.c keeps a call below 2^31 doubles). */
static fd_status grid_gather(void *ctx, uint32_t n, const double *mine, uint64_t cols, double *all)
{
    grid_comm *g = ctx;
    fd_status st = FD_OK;
    int P = 0, at = 0;
    MPI_CHECK_GOTO(MPI_Comm_size(g->fiber[n], &P), st, done);
    for (int p = 0; p < P; p++) {
        g->counts[p] = g->rows[n][p] * (int)cols;
        g->displs[p] = at;
        at += g->counts[p];
    }
    int me = 0;
    MPI_CHECK_GOTO(MPI_Comm_rank(g->fiber[n], &me), st, done);
    MPI_CHECK_GOTO(MPI_Allgatherv(mine, g->counts[me], MPI_DOUBLE, all, g->counts, g->displs, MPI_DOUBLE, g->fiber[n]),
                   st, done);
done:
    return st;
}

/* --stats: the phases, and a sweep's median wall time (the first sweeps
 * carry a GPU's one-time costs) with the means of its parts. */
static void print_stats(const bcp_model *m, double t_load, double t_fit)
{
    const uint32_t k = m->iters ? m->iters : 1;
    double *s = malloc(k * sizeof *s), med = NAN;
    if (s && m->iters) {
        memcpy(s, m->seconds, m->iters * sizeof *s);
        for (uint32_t i = 1; i < m->iters; i++) /* insertion sort: a few hundred sweeps */
            for (uint32_t j = i; j > 0 && s[j] < s[j - 1]; j--) {
                const double x = s[j];
                s[j] = s[j - 1];
                s[j - 1] = x;
            }
        med = m->iters % 2 ? s[m->iters / 2] : 0.5 * (s[m->iters / 2 - 1] + s[m->iters / 2]);
    }
    free(s);
    fprintf(stderr, "read and setup %.3f s, fit %.3f s (%.3f ms a sweep, median; mean %.3f ms: products %.3f ms, sums over ranks "
                    "%.3f ms, the rest on the host %.3f ms)\n",
            t_load, t_fit, 1e3 * med, 1e3 * m->sweep_seconds / k, 1e3 * m->product_seconds / k,
            1e3 * m->sum_seconds / k, 1e3 * (m->sweep_seconds - m->product_seconds - m->sum_seconds) / k);
}

/* Rank p's share of `rows` rows: [rows p / P, rows (p + 1) / P), as
 * counts and displacements of doubles at R a row. */
static fd_status row_shares(grid_comm *g, uint64_t rows, uint32_t R)
{
    if (rows * R > INT_MAX)
        return fd_fail(FD_ERR_INPUT, "a mode of %llu rows at rank %u is too long for one MPI message (2^31 numbers)",
                       (unsigned long long)rows, R);
    for (int p = 0; p < g->size; p++) {
        const uint64_t a = rows * (uint64_t)p / (uint64_t)g->size, b = rows * (uint64_t)(p + 1) / (uint64_t)g->size;
        g->displs[p] = (int)(a * R);
        g->counts[p] = (int)((b - a) * R);
    }
    return FD_OK;
}

/* bcp_comm's sum_rows: a reduce-scatter by row shares.  Each entry is
 * summed at its owner only, and gather_rows hands the owner's bits to
 * everyone, so every rank ends with the same factors. */
static fd_status grid_sum_rows(void *ctx, double *M, uint64_t rows, uint32_t R, uint64_t *o0, uint64_t *o1)
{
    grid_comm *g = ctx;
    fd_status st = FD_OK;
    FD_TRY(row_shares(g, rows, R));
    const uint64_t mine = (uint64_t)g->counts[g->rank];
    if (mine > g->share_cap) {
        double *b = realloc(g->share, mine * sizeof *b);
        if (!b) return fd_fail(FD_ERR_NOMEM, "out of memory");
        g->share = b;
        g->share_cap = mine;
    }
    MPI_CHECK_GOTO(MPI_Reduce_scatter(M, g->share, g->counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), st, done);
    memcpy(M + g->displs[g->rank], g->share, mine * sizeof *M);
    *o0 = (uint64_t)g->displs[g->rank] / R;
    *o1 = *o0 + mine / R;
done:
    return st;
}

/* bcp_comm's gather_rows: an all-gather of the row shares, in place. */
static fd_status grid_gather_rows(void *ctx, double *A, uint64_t rows, uint32_t R)
{
    grid_comm *g = ctx;
    fd_status st = FD_OK;
    FD_TRY(row_shares(g, rows, R));
    MPI_CHECK_GOTO(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, A, g->counts, g->displs, MPI_DOUBLE, MPI_COMM_WORLD),
                   st, done);
done:
    return st;
}

/* The masked fit's hooks (bcp_comm): rank p's share of rows as
 * row_shares cuts it, rank 0's values to every rank, agreement. */
static void grid_share(void *ctx, uint64_t rows, uint64_t *o0, uint64_t *o1)
{
    const grid_comm *g = ctx;
    *o0 = rows * (uint64_t)g->rank / (uint64_t)g->size;
    *o1 = rows * ((uint64_t)g->rank + 1) / (uint64_t)g->size;
}

static fd_status grid_bcast(void *ctx, double *v, uint64_t n)
{
    fd_status st = FD_OK;
    (void)ctx;
    for (uint64_t a = 0; a < n; a += 1u << 28) {
        const int k = (int)(n - a < (1u << 28) ? n - a : 1u << 28);
        MPI_CHECK_GOTO(MPI_Bcast(v + a, k, MPI_DOUBLE, 0, MPI_COMM_WORLD), st, done);
    }
done:
    return st;
}

static fd_status grid_agree(void *ctx, fd_status local)
{
    (void)ctx;
    return fd_mpi_agree(local, NULL);
}

/* power[r] += the squared norm of column r of the first `rows` rows of
 * mode n's factor. */
static void add_column_power(const bcp_model *m, uint32_t n, uint64_t rows, double *power)
{
    for (uint64_t i = 0; i < rows; i++)
        for (uint32_t r = 0; r < m->R; r++) power[r] += m->A[n][i * m->R + r] * m->A[n][i * m->R + r];
}

/* The weakest component: the smallest product over the modes of its
 * factors' norms (its share of the model's scale). */
static uint32_t weakest(const bcp_model *m)
{
    double norm[BCP_MAX_ORDER][256] = {{0}};
    for (uint32_t n = 0; n < m->order; n++) add_column_power(m, n, m->dims[n], norm[n]);
    uint32_t w = 0;
    double least = INFINITY;
    for (uint32_t r = 0; r < m->R; r++) {
        double s = 1;
        for (uint32_t n = 0; n < m->order; n++) s *= sqrt(norm[n][r]);
        if (s < least) {
            least = s;
            w = r;
        }
    }
    return w;
}

/* The masked fit's device: the backend's, where it has one and the run
 * opened it (state); NULL: the host. */
static const bcp_masked_dev *masked_dev(const struct bcp_ops *ops, void *state)
{
    return state && ops ? ops->masked : NULL;
}

/* With missing entries the ARD prior leaves small components that fit
 * the noise of the observed entries: a rank-5 100^3 tensor with 30%
 * missing ended at rank 6 or 7 from every start, its spare component
 * ~1/300 of a true one, while a fit at rank 5 had the higher bound
 * (bench/bcp-missing.sh).  So the kept model's weakest component is
 * dropped and the rest refitted from there, as long as that raises the
 * bound: the same variational model selection as among the starts. */
static fd_status check_rank(const bcp_tensor *t, const bcp_opts *o, const bcp_comm *comm, const struct bcp_ops *ops,
                            void *state, bcp_model *best, bcp_starts *diag)
{
    bcp_starts none = {0};
    if (!diag) diag = &none;
    diag->tried = 1;
    diag->rank0 = best->R;
    diag->lb0 = best->lb[best->iters - 1];
    diag->lb_lower = NAN;
    while (best->R > 1) {
        bcp_opts os = *o;
        bcp_model m;
        os.from = best;
        os.drop = weakest(best);
        os.rank = best->R - 1;
        FD_TRY(bcp_fit_masked(t, &os, comm, masked_dev(ops, state), state, &m, NULL));
        const double lb = m.lb[m.iters - 1];
        if (!(lb > best->lb[best->iters - 1])) {
            diag->lb_lower = lb;
            bcp_model_free(&m);
            break;
        }
        bcp_model_free(best);
        *best = m;
    }
    diag->rank1 = best->R;
    diag->lb1 = best->lb[best->iters - 1];
    return FD_OK;
}

/* bcp_fit from `starts` starts (the first as --init says, the others
 * random with seeds seed + 1, ...), keeping the highest lower bound
 * (variational model selection).  VB for CP has local optima: a 10 x 10 x
 * 13 rank-5 tensor stopped at rank 4, fit 0.69, from the SVD start at
 * rank 5, and reached 0.92 from a random one. */
static fd_status fit_best(const bcp_tensor *t, const bcp_opts *o, uint32_t starts, const bcp_comm *comm,
                          const struct bcp_ops *ops, void *state, bcp_model *best, fd_progress *prog, bcp_starts *diag)
{
    memset(best, 0, sizeof *best);
    const uint32_t S = starts ? starts : 1;
    if (diag && S > 1) {
        diag->n = S;
        diag->lb = calloc(S, sizeof *diag->lb);
        diag->fit = calloc(S, sizeof *diag->fit);
        diag->rank = calloc(S, sizeof *diag->rank);
        diag->iters = calloc(S, sizeof *diag->iters);
        if (!diag->lb || !diag->fit || !diag->rank || !diag->iters) return fd_fail(FD_ERR_NOMEM, "out of memory");
    }
    for (uint32_t s = 0; s < S; s++) {
        bcp_opts os = *o;
        bcp_model m;
        if (s > 0) {
            os.init = BCP_INIT_RANDOM;
            os.seed = o->seed + s;
        }
        /* Missing entries: their own fit (bcp_masked.h), whose state the
         * run opened with the backend's masked table. */
        FD_TRY(t->observed ? bcp_fit_masked(t, &os, comm, masked_dev(ops, state), state, &m, prog)
                           : bcp_fit(t, &os, comm, ops, state, &m, prog));
        const double a = m.lb[m.iters - 1], b = s == 0 ? -INFINITY : best->lb[best->iters - 1];
        if (diag && diag->n) {
            diag->lb[s] = a;
            diag->fit[s] = m.fit[m.iters - 1];
            diag->rank[s] = m.R;
            diag->iters[s] = m.iters;
            if (a > b) diag->best = s;
        }
        if (a > b) {
            bcp_model_free(best);
            *best = m;
        } else {
            bcp_model_free(&m);
        }
    }
    return t->observed ? check_rank(t, o, comm, ops, state, best, diag) : FD_OK;
}

/* Sub-tensor k's R strongest components (by power, sum over the modes
 * of the squared column norms) into its slot of sub (bcp_fuse.h's
 * layout). */
static void store_sub(const bcp_model *mk, uint32_t R, const uint64_t *cnt, uint32_t order, double *slot)
{
    double power[256] = {0};
    uint32_t pick[256];
    for (uint32_t n = 0; n < order; n++) add_column_power(mk, n, cnt[n], power);
    for (uint32_t q = 0; q < R; q++) {
        uint32_t best = 0;
        for (uint32_t r = 1; r < mk->R; r++)
            if (power[r] > power[best]) best = r;
        pick[q] = best;
        power[best] = -1;
    }
    for (uint32_t n = 0; n < order; n++) {
        for (uint64_t i = 0; i < cnt[n]; i++)
            for (uint32_t q = 0; q < R; q++) slot[i * R + q] = mk->A[n][i * mk->R + pick[q]];
        slot += cnt[n] * R;
    }
}

/* --fuse's sub-tensors k = me, me + P, ... of the grid, each read alone
 * and fitted as a tensor of its own from 3 R down by the usual pruning,
 * then its R strongest components into its slot of sub.  Started at R,
 * VB lost a true component in a 7 x 10 x 6 x 9 sub-tensor of a rank-5
 * tensor from 8 starts (rank 4, fit 0.72), and from 15 found all 5 (0.866,
 * TensorLy's best).  *first: sub-tensor 0, kept for the file's metadata
 * (only it hashes the file). */
static fd_status fit_subtensors(const bcp_job_opts *o, const struct bcp_ops *ops, int device, uint32_t order,
                                const uint64_t *dims, const uint64_t *grid, uint64_t K, int P, int me, int threads,
                                double *sub, bcp_tensor **first, int quiet)
{
    fd_status st = FD_OK;
    const uint32_t R = o->fit.rank;
    uint64_t lo[BCP_MAX_ORDER], cnt[BCP_MAX_ORDER];
    bcp_tensor *b = NULL;
    void *state = NULL;
    bcp_opts so = o->fit;
    so.rank = 3 * R < 256 ? 3 * R : 256;
    so.threads = threads;
    fd_progress prog = {0};
    fd_progress_start(&prog, "sub-tensors", K, quiet);
    for (uint64_t k = (uint64_t)me; k < K && st == FD_OK; k += (uint64_t)P) {
        bcp_model mk;
        memset(&mk, 0, sizeof mk);
        bcp_grid_block(k, order, dims, grid, lo, cnt);
        st = o->missing ? bcp_tensor_read_missing(&b, o->input, o->mask, lo, cnt, k == 0, threads)
                        : bcp_tensor_read(&b, o->input, lo, cnt, k == 0, threads);
        if (st == FD_OK) { /* fitted as a tensor of its own */
            for (uint32_t n = 0; n < order; n++) {
                b->lo[n] = 0;
                b->full[n] = b->dims[n];
            }
            b->full_size = b->size;
            /* one with missing entries by the masked fit, on the
             * backend's device where it has one */
            if (!b->observed) st = ops->open(&state, b, so.rank, device);
            else if (ops->masked) st = ops->masked->open(&state, b, so.rank, device);
        }
        if (st == FD_OK) st = fit_best(b, &so, o->starts ? o->starts : 4, NULL, ops, state, &mk, NULL, NULL);
        if (st == FD_OK && mk.R < R)
            st = fd_fail(FD_ERR_INPUT, "--fuse: sub-tensor %llu holds only %u of the %u components; cut the tensor "
                                       "into fewer parts or give a lower --rank", (unsigned long long)k, mk.R, R);
        if (state) {
            if (b->observed) ops->masked->close(state);
            else ops->close(state);
        }
        state = NULL;
        if (st == FD_OK) store_sub(&mk, R, cnt, order, sub + bcp_fuse_offset(order, dims, grid, R, k));
        bcp_model_free(&mk);
        if (k == 0 && !*first) *first = b;
        else bcp_tensor_destroy(&b);
        b = NULL;
        fd_progress_add(&prog, 1);
    }
    fd_progress_stop(&prog);
    return st;
}

/* The fused model's arrays: one iteration, no sweeps of the whole tensor. */
static fd_status fused_model_alloc(bcp_model *m, uint32_t order, const uint64_t *dims, uint32_t R)
{
    fd_status st = FD_OK;
    m->order = order;
    m->R = R;
    m->iters = m->cap = 1;
    FD_ALLOC_GOTO(m->lambda, R, st, done);
    FD_ALLOC_GOTO(m->lb, 1, st, done);
    FD_ALLOC_GOTO(m->fit, 1, st, done);
    FD_ALLOC_GOTO(m->ranks, 1, st, done);
    FD_ALLOC_GOTO(m->seconds, 1, st, done);
    m->seconds[0] = NAN;
    for (uint32_t n = 0; n < order; n++) {
        m->dims[n] = dims[n];
        FD_ALLOC_GOTO(m->A[n], dims[n] * R, st, done);
        FD_ALLOC_GOTO(m->Sigma[n], (size_t)R * R, st, done);
    }
done:
    return st;
}

/* With missing entries, block b's share of the fit over its observed
 * entries: sums[0] += y^2, sums[1] += y x, sums[2] += x^2 and sums[3] +=
 * 1 for each, x the model's value there (O(observed N R)). */
static void observed_sums(const bcp_model *m, const bcp_tensor *b, const uint64_t *lo, double *sums)
{
    uint64_t idx[BCP_MAX_ORDER];
    for (uint32_t n = 0; n < b->order; n++) idx[n] = lo[n];
    for (uint64_t e = 0; e < b->size; e++) {
        if (!b->observed || b->observed[e]) {
            const double x = bcp_model_entry(m, idx), y = b->x[e];
            sums[0] += y * y;
            sums[1] += y * x;
            sums[2] += x * x;
            sums[3] += 1;
        }
        for (uint32_t n = b->order; n-- > 0;) { /* the next index, C order */
            if (++idx[n] < lo[n] + b->dims[n]) break;
            idx[n] = lo[n];
        }
    }
}

/* This rank's share of the fit of the fused model: sums[0] += ||Y||^2 and
 * sums[1] += <Y, [[A]]> (the last mode's MTTKRP of each sub-tensor
 * against its rows of A) over its sub-tensors; with missing entries,
 * observed_sums' four over the observed ones. */
static fd_status fused_fit_sums(const bcp_job_opts *o, const struct bcp_ops *ops, int device, const bcp_model *m,
                                const uint64_t *grid, uint64_t K, int P, int me, int threads, double *sums)
{
    fd_status st = FD_OK;
    const uint32_t order = m->order, R = m->R, last = order - 1;
    uint64_t lo[BCP_MAX_ORDER], cnt[BCP_MAX_ORDER];
    bcp_tensor *b = NULL;
    void *state = NULL;
    double *G = malloc((size_t)R * R * sizeof *G);
    if (!G) return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (uint64_t k = (uint64_t)me; k < K && st == FD_OK; k += (uint64_t)P) {
        bcp_grid_block(k, order, m->dims, grid, lo, cnt);
        if (o->missing) {
            st = bcp_tensor_read_missing(&b, o->input, o->mask, lo, cnt, 0, threads);
            if (st == FD_OK) observed_sums(m, b, lo, sums);
            bcp_tensor_destroy(&b);
            continue;
        }
        st = bcp_tensor_read(&b, o->input, lo, cnt, 0, threads);
        if (st == FD_OK) st = ops->open(&state, b, R, device);
        double yx = 0;
        if (st == FD_OK) st = ops->put(state, (const double *const *)m->A, R);
        if (st == FD_OK) st = ops->contract(state, 1, threads);
        if (st == FD_OK) st = ops->mttkrp(state, last, threads);
        if (st == FD_OK) st = ops->gram(state, last, lo[last], lo[last] + cnt[last], G, &yx);
        if (st == FD_OK) {
            sums[1] += yx;
            for (uint64_t i = 0; i < b->size; i++) sums[0] += b->x[i] * b->x[i];
        }
        if (state) ops->close(state);
        state = NULL;
        bcp_tensor_destroy(&b);
    }
    free(G);
    return st;
}

/* The fused model's fit, noise precision and component precisions, as a
 * fit of the whole tensor would start, from the sums over all
 * sub-tensors: ||Y - [[A]]||^2 = ||Y||^2 - 2 <Y, [[A]]> + ||[[A]]||^2
 * (with missing entries, over the observed ones: sums[2] and sums[3]). */
static void fused_moments(bcp_model *m, const double *sums, int missing)
{
    const uint32_t order = m->order, R = m->R;
    double xx = 0, Msize = 1;
    for (uint32_t n = 0; n < order; n++) Msize *= (double)m->dims[n];
    for (uint32_t e = 0; e < R * R; e++) {
        double p = 1;
        for (uint32_t n = 0; n < order; n++) {
            double g = 0;
            for (uint64_t i = 0; i < m->dims[n]; i++) g += m->A[n][i * R + e / R] * m->A[n][i * R + e % R];
            p *= g;
        }
        xx += p;
    }
    if (missing) {
        xx = sums[2];
        Msize = sums[3];
    }
    const double res = fmax(0, sums[0] - 2 * sums[1] + xx);
    m->fit[0] = sums[0] > 0 ? 1 - sqrt(res / sums[0]) : 1;
    m->lb[0] = NAN;
    m->ranks[0] = R;
    m->tau = res > 0 ? Msize / res : INFINITY;
    for (uint32_t r = 0; r < R; r++) {
        double rows = 0, power = 0;
        for (uint32_t n = 0; n < order; n++) {
            rows += (double)m->dims[n];
            for (uint64_t i = 0; i < m->dims[n]; i++) power += m->A[n][i * R + r] * m->A[n][i * R + r];
        }
        m->lambda[r] = power > 0 ? rows / power : INFINITY;
    }
}

/* --fuse: sub-tensors round-robin over the ranks, each fitted at the
 * common rank; their factors summed over the ranks (each slot written by
 * one rank, zeros elsewhere, so the sum is exact); the fusion, the same
 * on every rank; then a second pass over the sub-tensors for the fit of
 * the fused model.  *first: sub-tensor 0 on rank 0 (for the file's
 * metadata). */
static fd_status fuse_job(const bcp_job_opts *o, const fd_mpi *mpi, const bcp_comm *comm, const struct bcp_ops *ops,
                          int device, uint32_t order, const uint64_t *dims, int threads, bcp_model *m,
                          bcp_tensor **first, uint32_t *fiters, uint64_t *observed, int quiet)
{
    fd_status st = FD_OK;
    const uint32_t R = o->fit.rank;
    const int P = comm->sum ? mpi->size : 1, me = comm->sum ? mpi->rank : 0;
    uint64_t grid[BCP_MAX_ORDER], K = 1;
    double *sub = NULL, sums[4] = {0, 0, 0, 0};
    if (o->fuse_n != order)
        return fd_fail(FD_ERR_USAGE, "--fuse gives %u modes; the tensor has %u", o->fuse_n, order);
    for (uint32_t n = 0; n < order; n++) {
        grid[n] = o->fuse[n];
        if (grid[n] > dims[n])
            return fd_fail(FD_ERR_USAGE, "--fuse: %llu parts of mode %u, which has %llu slices", (unsigned long long)grid[n],
                           n + 1, (unsigned long long)dims[n]);
        K *= grid[n];
    }
    FD_ALLOC_GOTO(sub, bcp_fuse_offset(order, dims, grid, R, K), st, done);
    st = fit_subtensors(o, ops, device, order, dims, grid, K, P, me, threads, sub, first, quiet);
    FD_TRY_GOTO(fd_mpi_agree(st, NULL), st, done);
    if (comm->sum) FD_TRY_GOTO(comm->sum(comm->ctx, sub, bcp_fuse_offset(order, dims, grid, R, K)), st, done);
    FD_TRY_GOTO(fused_model_alloc(m, order, dims, R), st, done);
    FD_TRY_GOTO(bcp_fuse(order, dims, grid, R, sub, BCP_FUSE_ITERS, 1e-12, m->A, fiters), st, done);
    m->converged = *fiters < BCP_FUSE_ITERS;
    st = fused_fit_sums(o, ops, device, m, grid, K, P, me, threads, sums);
    FD_TRY_GOTO(fd_mpi_agree(st, NULL), st, done);
    if (comm->sum) FD_TRY_GOTO(comm->sum(comm->ctx, sums, 4), st, done);
    fused_moments(m, sums, o->missing);
    *observed = o->missing ? (uint64_t)sums[3] : 0;
done:
    free(sub);
    return st;
}

/* One run's state, on every rank. */
typedef struct {
    const bcp_job_opts *o;
    const struct bcp_ops *ops;
    uint32_t order;
    uint64_t dims[BCP_MAX_ORDER], grid[BCP_MAX_ORDER];
    bcp_tensor *t;        /* this rank's block; under --fuse, sub-tensor 0 (its metadata) */
    void *state;          /* the backend's */
    grid_comm gc;         /* the process grid's communicators, when distributed */
    int gc_open, distributed, rank;
    bcp_model m;
    uint32_t fiters;      /* --fuse: the fusion's sweeps */
    uint64_t fuse_observed; /* --fuse with missing entries: the observed entries of all sub-tensors */
    double t_fit;
    bcp_starts starts;    /* --starts S > 1: each start's end */
    bcp_entries at;       /* --predict-at's entries (rank 0), checked before the fit */
} bcp_run;

/* The shape, and (without --fuse, whose sub-tensors are read one at a
 * time by the run) this rank's block of the process grid. */
static fd_status read_tensor(fd_job *j)
{
    bcp_run *r = j->w;
    r->distributed = j->mpi.size > 1 && fd_mpi_active();
    r->rank = j->mpi.rank;
    FD_TRY(bcp_tensor_shape(r->o->input, &r->order, r->dims));
    if (r->o->predict_at && j->mpi.rank == 0)
        FD_TRY(bcp_entries_read(r->o->predict_at, r->order, r->dims, j->threads, &r->at));
    if (r->o->missing) { /* every rank reads it whole: the ranks share the rows (bcp_masked.h) */
        for (uint32_t n = 0; n < r->order; n++) r->grid[n] = 1;
        return bcp_tensor_read_missing(&r->t, r->o->input, r->o->mask, NULL, NULL, 1, j->threads);
    }
    if (r->o->fuse_n) return FD_OK;
    uint64_t lo[BCP_MAX_ORDER], cnt[BCP_MAX_ORDER];
    FD_TRY(process_grid(r->distributed ? j->mpi.size : 1, r->order, r->dims, r->grid));
    bcp_grid_block((uint64_t)(r->distributed ? j->mpi.rank : 0), r->order, r->dims, r->grid, lo, cnt);
    return bcp_tensor_read(&r->t, r->o->input, lo, cnt, 1, j->threads);
}

/* Missing entries are fitted with the backend's masked table where it has
 * one (bcp_masked.h), else on the CPU. */
static const fd_device_ops *backend_for(fd_job *j)
{
    bcp_run *r = j->w;
    if (!r->t || !r->t->observed || r->ops == &bcp_cpu_ops || r->ops->masked) return j->dev;
    if (fd_job_speaks(j))
        fprintf(stderr, "fcbo-dist bcp: a tensor with missing entries is fitted on the CPU backend (not on %s yet)\n",
                r->ops->dev.name);
    r->ops = &bcp_cpu_ops;
    return &bcp_cpu_ops.dev;
}

/* Ranks compare their files' hashes before the fit; one rank's hash is
 * waited for only at commit. */
static fd_status same_tensor(fd_job *j)
{
    bcp_run *r = j->w;
    if (r->o->fuse_n || !r->distributed) return FD_OK;
    FD_TRY(fd_mpi_agree(bcp_tensor_hash(r->t), NULL));
    return fd_mpi_same_hash(r->t->sha256, r->o->input);
}

/* The block onto the device (if any) once; the process grid's
 * communicators; the GPUs' own collectives (NCCL), where the backend has
 * them.  Collective: agrees before each collective step. */
static fd_status setup(fd_job *j)
{
    bcp_run *r = j->w;
    if (r->t && r->t->observed && !r->o->fuse_n) {
        if (r->distributed) { /* the masked fit's row shares */
            const fd_status st = grid_comm_flat(&r->gc, j->mpi.rank, j->mpi.size);
            r->gc_open = st == FD_OK;
            FD_TRY(fd_mpi_agree(st, NULL));
        }
        /* Its sums on the backend's device, over the whole tensor. */
        if (!r->ops->masked) return FD_OK;
        return fd_mpi_agree(r->ops->masked->open(&r->state, r->t, r->o->fit.rank, j->device), NULL);
    }
    if (r->o->fuse_n) return FD_OK; /* the sub-tensors' states are the run's */
    FD_TRY(fd_mpi_agree(r->ops->open(&r->state, r->t, r->o->fit.rank, j->device), NULL));
    if (!r->distributed) return FD_OK;
    uint64_t lo[BCP_MAX_ORDER], cnt[BCP_MAX_ORDER];
    bcp_grid_block((uint64_t)j->mpi.rank, r->order, r->dims, r->grid, lo, cnt);
    fd_status st = grid_comm_open(&r->gc, j->mpi.rank, j->mpi.size, r->order, r->grid, cnt);
    r->gc_open = st == FD_OK;
    FD_TRY(fd_mpi_agree(st, NULL));
    return r->ops->connect ? r->ops->connect(r->state, &j->mpi) : FD_OK;
}

static fd_status run(fd_job *j)
{
    bcp_run *r = j->w;
    const bcp_job_opts *o = r->o;
    fd_status st;
    const double t = fd_now();
    if (o->fuse_n) {
        const bcp_comm comm = {.sum = r->distributed ? mpi_sum : NULL, .ctx = &r->rank};
        st = fuse_job(o, &j->mpi, &comm, r->ops, j->device, r->order, r->dims, j->threads, &r->m, &r->t, &r->fiters,
                      &r->fuse_observed, !fd_job_speaks(j));
    } else {
        const int masked = r->t && r->t->observed, d = r->distributed;
        const bcp_comm comm = {.sum = d ? grid_sum : NULL,
                               .ctx = &r->gc,
                               .gather = d && !masked ? grid_gather : NULL,
                               .sum_rows = d && !masked ? grid_sum_rows : NULL,
                               .gather_rows = d ? grid_gather_rows : NULL,
                               .share = d && masked ? grid_share : NULL,
                               .bcast = d && masked ? grid_bcast : NULL,
                               .agree = d && masked ? grid_agree : NULL};
        bcp_opts fo = o->fit;
        fo.threads = j->threads;
        fd_progress prog = {0};
        /* The sweep limit: the fit stops there at the latest. */
        fd_progress_start(&prog, "sweeps", (uint64_t)fo.max_iter * (uint64_t)(o->starts > 0 ? o->starts : 1),
                          !fd_job_speaks(j));
        st = fit_best(r->t, &fo, o->starts, &comm, r->ops, r->state, &r->m, &prog, &r->starts);
        fd_progress_stop(&prog);
    }
    r->t_fit = fd_now() - t;
    return st == FD_ERR_MPI ? st : fd_mpi_agree(st, NULL);
}

/* Rank 0 writes the one file. */
static fd_status commit(fd_job *j)
{
    bcp_run *r = j->w;
    if (j->mpi.rank != 0 || !j->out.result) return FD_OK;
    FD_TRY(bcp_tensor_hash(r->t));
    return bcp_h5_write(j->out.result, r->o, r->t, &r->m, j->mpi.size, r->o->fuse_n ? 0 : j->setup_s, r->t_fit,
                        r->fiters, r->fuse_observed, &r->starts, r->o->predict_at ? &r->at : NULL);
}

/* The restarts' diagnostics: the bound kept, how far the others ended
 * from it, and how often each start found the rank that was kept (a
 * spread near 0 and one rank everywhere: the start does not matter). */
static void print_starts(const bcp_starts *s)
{
    if (s->tried) {
        fprintf(stderr, "rank checked by the bound: rank %u -> %u (lower bound %.10g -> %.10g)", s->rank0, s->rank1,
                s->lb0, s->lb1);
        if (!isnan(s->lb_lower)) fprintf(stderr, "; one component fewer: %.10g", s->lb_lower);
        fputc('\n', stderr);
    }
    if (s->n < 2) return;
    double lo = s->lb[0], hi = s->lb[0];
    uint32_t same = 0;
    for (uint32_t k = 0; k < s->n; k++) {
        lo = s->lb[k] < lo ? s->lb[k] : lo;
        hi = s->lb[k] > hi ? s->lb[k] : hi;
        same += s->rank[k] == s->rank[s->best];
    }
    fprintf(stderr, "%u starts: best lower bound %.10g (start %u, rank %u, fit %.6f); bounds span %.6g (worst %.10g); "
                    "rank %u in %u of %u starts\n",
            s->n, s->lb[s->best], s->best, s->rank[s->best], s->fit[s->best], hi - lo, lo, s->rank[s->best], same,
            s->n);
    for (uint32_t k = 0; k < s->n; k++)
        fprintf(stderr, "  start %u: lower bound %.10g, fit %.6f, rank %u, %u sweeps%s\n", k, s->lb[k], s->fit[k],
                s->rank[k], s->iters[k], k == s->best ? " (kept)" : "");
}

static void report(fd_job *j)
{
    const bcp_run *r = j->w;
    const bcp_job_opts *o = r->o;
    const bcp_model *m = &r->m;
    if (o->fuse_n) {
        fprintf(stderr, "rank %u of a", m->R);
        for (uint32_t n = 0; n < r->order; n++) fprintf(stderr, "%s%llu", n ? " x " : " ", (unsigned long long)r->dims[n]);
        fprintf(stderr, " tensor by --fuse (");
        for (uint32_t n = 0; n < r->order; n++) fprintf(stderr, "%s%llu", n ? "x" : "", (unsigned long long)o->fuse[n]);
        fprintf(stderr, " sub-tensors): fit %.6f, fusion %s after %u sweeps, in %.3f s", m->fit[0],
                m->converged ? "converged" : "stopped", r->fiters, r->t_fit);
        if (j->mpi.size > 1) fprintf(stderr, ", %d ranks", j->mpi.size);
    } else {
        fprintf(stderr, "rank %u (from %u) of a", m->R, o->fit.rank);
        for (uint32_t n = 0; n < r->order; n++) fprintf(stderr, "%s%llu", n ? " x " : " ", (unsigned long long)r->dims[n]);
        fprintf(stderr, " tensor: fit %.6f after %u sweeps (%s) in %.3f s", m->fit[m->iters - 1], m->iters,
                m->converged ? "converged" : "--max-iter reached", fd_now() - j->t0);
        if (r->ops->dev.devices) fprintf(stderr, ", 1 GPU a rank (rank 0: GPU %d)", j->device);
        if (j->mpi.size > 1) {
            fprintf(stderr, ", %d ranks (grid", j->mpi.size);
            for (uint32_t n = 0; n < r->order; n++)
                fprintf(stderr, "%s%llu", n ? " x " : " ", (unsigned long long)r->grid[n]);
            fputc(')', stderr);
        }
    }
    if (j->out.result) fprintf(stderr, "; wrote %s", j->out.result);
    fputc('\n', stderr);
    uint64_t size = 1, seen = 0;
    for (uint32_t n = 0; n < r->order; n++) size *= r->dims[n];
    if (o->fuse_n && o->missing) seen = r->fuse_observed;
    else if (!o->fuse_n && r->t && r->t->observed) seen = r->t->n_observed;
    if (seen && seen < size)
        fprintf(stderr, "missing entries: %llu of %llu (%.1f%%); the fit is over the %llu observed\n",
                (unsigned long long)(size - seen), (unsigned long long)size, 100.0 * (double)(size - seen) / (double)size,
                (unsigned long long)seen);
    print_starts(&r->starts);
    if (o->stats && !o->fuse_n) {
        /* The read apart from the device's setup (the block's copy to it,
         * cuBLAS's start), which the line below takes together. */
        fd_job_print_phases(j, stderr);
        print_stats(m, j->setup_s, r->t_fit);
    }
}

static void close_run(fd_job *j, fd_status st)
{
    bcp_run *r = j->w;
    (void)st;
    if (r->gc_open) grid_comm_free(&r->gc);
    if (r->state) { /* the masked fit's, or the dense fit's */
        if (r->t && r->t->observed) r->ops->masked->close(r->state);
        else r->ops->close(r->state);
    }
    bcp_model_free(&r->m);
    bcp_tensor_destroy(&r->t);
    bcp_entries_free(&r->at);
    free(r->starts.lb);
    free(r->starts.fit);
    free(r->starts.rank);
    free(r->starts.iters);
}

static const fd_job_ops bcp_job_ops = {
    .read = read_tensor,
    .check_input = same_tensor,
    .backend_for = backend_for,
    .setup = setup,
    .run = run,
    .commit = commit,
    .report = report,
    .close = close_run,
};

fd_status bcp_job_run(const bcp_job_opts *o)
{
    bcp_run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    FD_TRY(bcp_backend_get(o->backend, &r.ops));
    /* A GPU rank holds its block on the device: more ranks than GPUs is
     * refused before the tensor is read. */
    const fd_job_opts jo = {.workload = "bcp", .outdir = o->outdir, .force = o->force, .quiet = o->quiet,
                            .stats = o->stats, .threads = o->fit.threads, .place_first = 1};
    return fd_job_run(&bcp_job_ops, &jo, &r.ops->dev, &r);
}
