/* The dpc run (see dpc_job.h).  Every rank computes rho and then delta
 * for its contiguous share of the points against all points; the shares
 * are all-gathered, so that each rank holds every value and the rest
 * (centres, labels, the halo's border densities) comes out the same
 * everywhere.  Rows are whole on one rank, so no sum depends on P. */
#include "dpc_job.h"

#include "../common/backend.h"
#include "../common/clock.h"
#include "../job/resultdir.h"
#include "../mpi/device_warm.h"
#include "../mpi/placement.h"
#include "dpc_backend.h"
#include "dpc_h5.h"
#include "dpc_plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every rank's share of v (rank r: [off[r], off[r + 1])) into v
 * everywhere, with MPI on the host. */
static fd_status gather_shares(void *v, MPI_Datatype type, const uint64_t *off, const fd_mpi *mpi)
{
    fd_status st = FD_OK;
    if (mpi->size == 1 || !fd_mpi_active()) return FD_OK;
    int *cnt = malloc((size_t)mpi->size * sizeof *cnt), *dsp = malloc((size_t)mpi->size * sizeof *dsp);
    if (!cnt || !dsp) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    for (int r = 0; r < mpi->size; r++) {
        cnt[r] = (int)(off[r + 1] - off[r]);
        dsp[r] = (int)off[r];
    }
    MPI_CHECK_GOTO(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, cnt, dsp, type, MPI_COMM_WORLD), st, done);
done:
    free(cnt);
    free(dsp);
    return st;
}

typedef struct {
    dpc_points *p;
    double *rho, *delta, *gamma, *border;
    int64_t *parent, *centers;
    int32_t *labels, *core;
    uint32_t k;
} dpc_state;

static void state_free(dpc_state *s)
{
    dpc_points_destroy(&s->p);
    free(s->rho);
    free(s->delta);
    free(s->gamma);
    free(s->border);
    free(s->parent);
    free(s->centers);
    free(s->labels);
    free(s->core);
}

static fd_status choose_dc(const dpc_opts *o, const struct dpc_ops *ops, void *dev, const dpc_points *p, int threads,
                           double *dc)
{
    if (o->dc_rule == 'x') *dc = o->dc;
    else if (o->dc_rule == 'k') FD_TRY(ops->dc_neighbors(dev, p, o->neighbors, o->seed, threads, dc));
    else FD_TRY(dpc_dc_percent(p, o->dc_percent, o->seed, dc));
    return FD_OK;
}

fd_status dpc_job_run(const dpc_opts *o, const fd_mpi *mpi)
{
    fd_status st = FD_OK;
    dpc_state s;
    resultdir out;
    const struct dpc_ops *ops = NULL;
    void *dev = NULL; /* the backend's state */
    uint64_t *off = NULL; /* rank r's rows: [off[r], off[r + 1]) */
    int device = -1;
    double t0 = fd_now(), t, dc = 0, ari = NAN, tl = 0, tdc = 0, trho = 0, tdelta = 0, tassign = 0;
    memset(&s, 0, sizeof s);
    /* Rank 0 writes the one result file; the others only compute. */
    st = rd_open(&out, o->outdir, "dpc", o->force ? RD_FORCE : RD_NEW, mpi, 0);
    if (st != FD_OK) goto done;
    st = dpc_backend_get(o->backend, &ops);
    int T = o->threads > 0 ? o->threads : fd_place_threads(mpi); /* the rank's share of the cores */
    /* The context made while reading (device_warm.h); points the backend
     * does not take fall back to the CPU after reading, so a failure to
     * place the rank is said after that, if it still applies.
     * Collective: every rank has the same backend. */
    fd_warm warm = {0};
    if (st == FD_OK && fd_warm_start(&warm, mpi, &ops->dev) != FD_OK) fd_errclear();
    if (st == FD_OK) st = dpc_points_read(&s.p, o->input, &o->cols, T);
    fd_warm_join(&warm);
    if (st == FD_OK && s.p->n >= (1ull << 31))
        st = fd_fail(FD_ERR_INPUT, "%s: %llu points; dpc takes fewer than 2^31", o->input, (unsigned long long)s.p->n);
    if ((st = fd_mpi_agree(st, NULL)) != FD_OK) goto done;
    if ((st = fd_mpi_same_hash(s.p->sha256, o->input)) != FD_OK) goto done;
    const uint64_t n = s.p->n;
    /* The same points on every rank: every rank falls back, or none. */
    if (ops->supports && !ops->supports(s.p)) {
        if (!o->quiet && mpi->rank == 0)
            fprintf(stderr, "fcbo-dist dpc: points of %u coordinates run on the CPU backend (the %s backend does not take "
                            "them)\n",
                    s.p->d, ops->dev.name);
        ops = &dpc_cpu_ops;
    }
    /* A GPU rank drives its device from one thread; the host's passes
     * (d_c, the halo) keep the rank's cores. */
    if (ops->dev.devices) {
        st = fd_place_device(mpi, ops->dev.devices(), &device);
        if (st == FD_OK && ops->dev.open_device) st = ops->dev.open_device(device);
    }
    if (st == FD_OK && ops->open) st = ops->open(&dev, s.p, device);
    if ((st = fd_mpi_agree(st, NULL)) != FD_OK) goto done;
    /* Results that live on the devices are all-gathered there (NCCL),
     * where every rank can; else with MPI on the host. */
    int on_device = 0;
    if (ops->connect) {
        if ((st = fd_mpi_agree(ops->connect(dev, mpi, &on_device), NULL)) != FD_OK) goto done;
        if (mpi->size > 1 && fd_mpi_active())
            MPI_CHECK_GOTO(MPI_Allreduce(MPI_IN_PLACE, &on_device, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), st, done);
    }
    tl = fd_now() - t0;

    t = fd_now();
    st = fd_mpi_agree(choose_dc(o, ops, dev, s.p, T, &dc), NULL);
    if (st != FD_OK) goto done;
    tdc = fd_now() - t;

    uint64_t i0, i1;
    off = malloc(((size_t)mpi->size + 1) * sizeof *off);
    if (!off) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    for (int r = 0; r <= mpi->size; r++) off[r] = n * (uint64_t)r / (uint64_t)mpi->size;
    i0 = off[mpi->rank];
    i1 = off[mpi->rank + 1];
    s.rho = malloc(n * sizeof *s.rho);
    s.delta = malloc(n * sizeof *s.delta);
    s.gamma = malloc(n * sizeof *s.gamma);
    s.parent = malloc(n * sizeof *s.parent);
    s.labels = malloc(n * sizeof *s.labels);
    st = s.rho && s.delta && s.gamma && s.parent && s.labels ? FD_OK : fd_fail(FD_ERR_NOMEM, "out of memory");
    t = fd_now();
    fd_progress prog = {0};
    fd_progress_start(&prog, "points (rho)", o->quiet || mpi->rank != 0);
    if (st == FD_OK) st = ops->rho_rows(dev, s.p, dc, o->kernel, i0, i1, T, s.rho + i0, &prog);
    fd_progress_stop(&prog);
    if ((st = fd_mpi_agree(st, NULL)) != FD_OK) goto done;
    st = on_device ? ops->gather(dev, DPC_PASS_RHO, off, s.rho, NULL) : gather_shares(s.rho, MPI_DOUBLE, off, mpi);
    if ((st = fd_mpi_agree(st, NULL)) != FD_OK) goto done;
    trho = fd_now() - t;

    t = fd_now();
    fd_progress_start(&prog, "points (delta)", o->quiet || mpi->rank != 0);
    st = ops->delta_rows(dev, s.p, s.rho, i0, i1, T, s.delta + i0, s.parent + i0, &prog);
    fd_progress_stop(&prog);
    if ((st = fd_mpi_agree(st, NULL)) != FD_OK) goto done;
    if (on_device) st = ops->gather(dev, DPC_PASS_DELTA, off, s.delta, s.parent);
    else if ((st = gather_shares(s.delta, MPI_DOUBLE, off, mpi)) == FD_OK) st = gather_shares(s.parent, MPI_INT64_T, off, mpi);
    if ((st = fd_mpi_agree(st, NULL)) != FD_OK) goto done;
    tdelta = fd_now() - t;

    t = fd_now();
    st = dpc_centers(s.p, s.rho, s.delta, s.parent, &o->centers, s.gamma, s.labels, &s.centers, &s.k);
    if (st == FD_OK) st = ops->labels(dev, n, s.parent, s.labels);
    st = fd_mpi_agree(st, NULL);
    if (st != FD_OK) goto done;
    if (o->halo) {
        s.border = calloc(s.k + 1, sizeof *s.border);
        s.core = malloc(n * sizeof *s.core);
        st = s.border && s.core ? FD_OK : fd_fail(FD_ERR_NOMEM, "out of memory");
        fd_progress_start(&prog, "points (halo)", o->quiet || mpi->rank != 0);
        if (st == FD_OK) st = dpc_halo_border(s.p, dc, s.rho, s.labels, s.k, i0, i1, T, s.border, &prog);
        fd_progress_stop(&prog);
        if ((st = fd_mpi_agree(st, NULL)) != FD_OK) goto done;
        if (mpi->size > 1 && fd_mpi_active())
            MPI_CHECK_GOTO(MPI_Allreduce(MPI_IN_PLACE, s.border, (int)s.k + 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), st,
                           done);
        dpc_halo_core(n, s.rho, s.labels, s.border, s.core);
    }
    if (s.p->truth) ari = dpc_ari(s.core ? s.core : s.labels, s.p->truth, n);
    tassign = fd_now() - t;

    if (o->outdir && mpi->rank == 0) {
        const dpc_result r = {s.p,     dc,    s.rho,  s.delta, s.gamma, s.parent, s.centers, s.labels, s.core, s.k,
                              ari,     tl,    tdc,    trho,    tdelta,  tassign,  mpi->size, T};
        st = dpc_h5_write(out.result, o, &r);
    }
    if (st == FD_OK && o->plot && mpi->rank == 0) {
        st = dpc_plot_write(o->plot, s.p, s.rho, s.delta, s.labels, s.core, s.centers, s.k);
        /* A run that fails leaves no result that looks complete. */
        if (st != FD_OK && o->outdir) unlink(out.result);
    }
    if ((st = fd_mpi_agree(st, NULL)) != FD_OK) goto done;
    if (!o->quiet && mpi->rank == 0) {
        fprintf(stderr, "%u clusters in %llu points (d = %u, %s kernel, d_c = %.6g) in %.3f s", s.k,
                (unsigned long long)n, s.p->d, o->kernel == DPC_CUTOFF ? "cutoff" : "Gaussian", dc, fd_now() - t0);
        if (mpi->size > 1) fprintf(stderr, ", %d ranks x ", mpi->size);
        else fprintf(stderr, ", ");
        if (ops->dev.devices) fprintf(stderr, "1 GPU (rank 0: GPU %d) and ", device);
        fprintf(stderr, "%d thread%s", T, T == 1 ? "" : "s");
        if (ops->dev.devices) fprintf(stderr, " a rank");
        if (ops->dev.devices && mpi->size > 1) fprintf(stderr, " (all-gathers by %s)", on_device ? "NCCL" : "MPI");
        if (!isnan(ari)) fprintf(stderr, "; ARI %.4f against column %u", ari, o->cols.label);
        if (o->outdir) fprintf(stderr, "; wrote %s", out.result);
        if (o->plot) fprintf(stderr, "%s %s", o->outdir ? " and" : "; wrote", o->plot);
        fputc('\n', stderr);
        if (o->stats)
            fprintf(stderr, "load %.3f s, d_c %.3f s, rho %.3f s, delta %.3f s, centres and labels %.3f s\n", tl, tdc,
                    trho, tdelta, tassign);
    }
done:
    free(off);
    if (dev) ops->close(dev);
    rd_close(&out, st);
    state_free(&s);
    return st;
}
