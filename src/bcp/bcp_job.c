/* The bcp run (see bcp_job.h).  The ranks form a process grid over the
 * tensor's modes (P = P_1 x ... x P_N); each reads and keeps its block
 * only, and every rank holds every factor (they are small: sum_n I_n x
 * R).  Per mode, each rank's MTTKRP of its block fills its rows of the
 * product; the sum over ranks (a reduction to rank 0 and a broadcast, so
 * that every rank gets the same bits) gives every rank the whole of it,
 * and the update after it is the same everywhere.  The same holds for
 * ||Y||^2 and the SVD start's Gram matrices. */
#include "bcp_job.h"

#include "../common/clock.h"
#include "../io/h5part.h"
#include "../mpi/placement.h"
#include "bcp_backend.h"
#include "bcp_h5.h"

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

/* Rank r's block: its place on the grid (C order), then an even share of
 * each mode. */
static void rank_block(int r, uint32_t order, const uint64_t *dims, const uint64_t *grid, uint64_t *lo, uint64_t *cnt)
{
    uint64_t v = (uint64_t)r;
    for (uint32_t n = order; n-- > 0;) {
        const uint64_t c = v % grid[n];
        v /= grid[n];
        lo[n] = dims[n] * c / grid[n];
        cnt[n] = dims[n] * (c + 1) / grid[n] - lo[n];
    }
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

fd_status bcp_job_run(const bcp_job_opts *o, const fd_mpi *mpi)
{
    fd_status st = FD_OK;
    bcp_tensor *t = NULL;
    bcp_model m;
    h5part_set out;
    uint32_t order = 0;
    uint64_t dims[BCP_MAX_ORDER], grid[BCP_MAX_ORDER], lo[BCP_MAX_ORDER], cnt[BCP_MAX_ORDER];
    const int distributed = mpi->size > 1 && fd_mpi_active();
    const struct bcp_ops *ops = NULL;
    void *state = NULL; /* the backend's */
    int device = -1;
    int rank = mpi->rank;
    memset(&m, 0, sizeof m);
    double t0 = fd_now();
    /* Rank 0 writes the one result file. */
    st = fd_mpi_agree(h5part_set_open(&out, o->outdir, "bcp.h5", o->force, mpi->rank, 1), NULL);
    if (st != FD_OK) goto done;
    st = bcp_backend_get(o->backend, &ops);
    if (st == FD_OK) st = bcp_tensor_shape(o->input, &order, dims);
    if (st == FD_OK) st = process_grid(distributed ? mpi->size : 1, order, dims, grid);
    if (st == FD_OK) {
        rank_block(distributed ? mpi->rank : 0, order, dims, grid, lo, cnt);
        st = bcp_tensor_read(&t, o->input, lo, cnt);
    }
    if ((st = fd_mpi_agree(st, NULL)) != FD_OK) goto done;
    if ((st = fd_mpi_same_hash(t->sha256, o->input)) != FD_OK) goto done;
    /* A GPU rank drives its device; its block goes there once. */
    if (ops->devices) {
        st = fd_place_device(mpi, ops->devices(), &device);
        if (st == FD_OK && ops->open_device) st = ops->open_device(device);
    }
    if (st == FD_OK) st = ops->open(&state, t, o->fit.rank, device);
    if ((st = fd_mpi_agree(st, NULL)) != FD_OK) goto done;
    const double t_load = fd_now() - t0, t1 = fd_now();
    fd_progress prog = {0};
    fd_progress_start(&prog, "sweeps", o->quiet || mpi->rank != 0);
    const bcp_comm comm = {distributed ? mpi_sum : NULL, &rank};
    bcp_opts fo = o->fit;
    if (fo.threads < 1) fo.threads = fd_place_threads(mpi);
    st = bcp_fit(t, &fo, &comm, ops, state, &m, &prog);
    fd_progress_stop(&prog);
    if ((st = fd_mpi_agree(st, NULL)) != FD_OK) goto done;
    const double t_fit = fd_now() - t1;
    if (o->outdir && mpi->rank == 0) st = bcp_h5_write(out.master, o, t, &m, mpi->size, t_load, t_fit);
    if ((st = fd_mpi_agree(st, NULL)) != FD_OK) goto done;
    if (!o->quiet && mpi->rank == 0) {
        fprintf(stderr, "rank %u (from %u) of a", m.R, o->fit.rank);
        for (uint32_t n = 0; n < order; n++) fprintf(stderr, "%s%llu", n ? " x " : " ", (unsigned long long)dims[n]);
        fprintf(stderr, " tensor: fit %.6f after %u sweeps (%s) in %.3f s", m.fit[m.iters - 1], m.iters,
                m.converged ? "converged" : "--max-iter reached", fd_now() - t0);
        if (ops->devices) fprintf(stderr, ", 1 GPU a rank (rank 0: GPU %d)", device);
        if (mpi->size > 1) {
            fprintf(stderr, ", %d ranks (grid", mpi->size);
            for (uint32_t n = 0; n < order; n++) fprintf(stderr, "%s%llu", n ? " x " : " ", (unsigned long long)grid[n]);
            fputc(')', stderr);
        }
        if (o->outdir) fprintf(stderr, "; wrote %s", out.master);
        fputc('\n', stderr);
        if (o->stats)
            fprintf(stderr, "load %.3f s, fit %.3f s (%.3f ms a sweep)\n", t_load, t_fit,
                    1e3 * t_fit / (m.iters ? m.iters : 1));
    }
done:
    if (state) ops->close(state);
    h5part_set_close(&out, st);
    bcp_model_free(&m);
    bcp_tensor_destroy(&t);
    return st;
}
