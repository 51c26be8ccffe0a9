/* SPDX-License-Identifier: BSD-3-Clause */
/* The dpc run (see dpc_job.h).  Every rank computes rho and then delta
 * for its contiguous share of the points against all points; the shares
 * are all-gathered, so that each rank holds every value and the rest
 * (centres, labels, the halo's border densities) comes out the same
 * everywhere.  Rows are whole on one rank, so no sum depends on P. */
#include "dpc_job.h"
#include "dpc_predict.h"

#include "../common/bigmem.h"
#include "../common/clock.h"
#include "../job/job.h"
#include "dpc_backend.h"
#include "dpc_h5.h"
#include "dpc_plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    dpc_points *p;
    double *rho, *delta, *gamma, *border;
    int64_t *parent, *centers;
    int32_t *labels, *core;
    uint64_t n;           /* the points the arrays above hold (fd_big_free) */
    uint32_t k;
    dpc_auto_report rep;  /* the automatic rules' findings */
    dpc_points *q;        /* --predict's points, and what they were given */
    dpc_prediction pred;
} dpc_state;

static void state_free(dpc_state *s)
{
    dpc_points_destroy(&s->p);
    fd_big_free(s->rho, s->n * sizeof *s->rho);
    fd_big_free(s->delta, s->n * sizeof *s->delta);
    fd_big_free(s->gamma, s->n * sizeof *s->gamma);
    free(s->border);
    fd_big_free(s->parent, s->n * sizeof *s->parent);
    free(s->centers);
    fd_big_free(s->labels, s->n * sizeof *s->labels);
    free(s->core);
    dpc_points_destroy(&s->q);
    dpc_prediction_free(&s->pred);
}

static fd_status choose_dc(const dpc_opts *o, const struct dpc_ops *ops, void *dev, const dpc_points *p, int threads,
                           double *dc)
{
    if (o->dc_rule == 'x') *dc = o->dc;
    else if (o->dc_rule == 'k') FD_TRY(ops->dc_neighbors(dev, p, o->neighbors, o->seed, threads, dc));
    else FD_TRY(dpc_dc_percent(p, o->dc_percent, o->seed, dc));
    return FD_OK;
}

/* One run's state, on every rank. */
typedef struct {
    const dpc_opts *o;
    const struct dpc_ops *ops;
    dpc_state s;
    void *dev;            /* the backend's state */
    int on_device;        /* results all-gathered on the devices (NCCL) */
    uint64_t *off;        /* rank r's rows: [off[r], off[r + 1]) */
    double dc, ari, t_dc, t_rho, t_delta, t_assign;
} dpc_run;

static fd_status read_points(fd_job *j)
{
    dpc_run *r = j->w;
    FD_TRY(dpc_points_read(&r->s.p, r->o->input, &r->o->cols, j->threads));
    if (r->s.p->n >= (1ull << 31))
        return fd_fail(FD_ERR_INPUT, "%s: %llu points; dpc takes fewer than 2^31", r->o->input,
                       (unsigned long long)r->s.p->n);
    if (!r->o->predict) return FD_OK;
    /* The new points' coordinates are the same columns as the fit's; they
     * carry no truth. */
    dpc_columns qc = r->o->cols;
    qc.label = 0;
    qc.labels = NULL;
    FD_TRY(dpc_points_read(&r->s.q, r->o->predict, &qc, j->threads));
    if (r->s.q->d != r->s.p->d)
        return fd_fail(FD_ERR_INPUT, "--predict %s: points of %u coordinates, the fit's have %u", r->o->predict,
                       r->s.q->d, r->s.p->d);
    return FD_OK;
}

/* Ranks compare their files' hashes before the fit; one rank's hash is
 * waited for only at commit, so that it goes on beside the fit. */
static fd_status same_points(fd_job *j)
{
    dpc_run *r = j->w;
    const char *sha = NULL;
    if (j->mpi.size == 1) return FD_OK;
    FD_TRY(fd_mpi_agree(dpc_points_sha256(r->s.p, &sha), NULL));
    return fd_mpi_same_hash(sha, r->o->input);
}

/* The same points on every rank: every rank falls back, or none. */
static const fd_device_ops *backend_for(fd_job *j)
{
    dpc_run *r = j->w;
    if (!r->ops->supports || r->ops->supports(r->s.p)) return j->dev;
    if (fd_job_speaks(j))
        fprintf(stderr, "fcbo-dist dpc: points of %u coordinates run on the CPU backend (the %s backend does not take "
                        "them)\n",
                r->s.p->d, r->ops->dev.name);
    r->ops = &dpc_cpu_ops;
    return &dpc_cpu_ops.dev;
}

/* The backend's state, then its own collectives (NCCL), where every rank
 * can: results that live on the devices are all-gathered there, else with
 * MPI on the host.  Collective; agrees before each collective step. */
static fd_status setup(fd_job *j)
{
    dpc_run *r = j->w;
    fd_status st = FD_OK;
    if (r->ops->open) st = r->ops->open(&r->dev, r->s.p, j->device);
    FD_TRY(fd_mpi_agree(st, NULL));
    if (!r->ops->connect) return FD_OK;
    FD_TRY(fd_mpi_agree(r->ops->connect(r->dev, &j->mpi, &r->on_device), NULL));
    if (j->mpi.size > 1 && fd_mpi_active())
        MPI_CHECK_GOTO(MPI_Allreduce(MPI_IN_PLACE, &r->on_device, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), st, done);
done:
    return st;
}

/* d_c, then rho and delta over this rank's rows, all-gathered; the
 * centres, labels and halo, the same on every rank.  Each step ends in an
 * agreement. */
static fd_status run(fd_job *j)
{
    dpc_run *r = j->w;
    const dpc_opts *o = r->o;
    const struct dpc_ops *ops = r->ops;
    const fd_mpi *mpi = &j->mpi;
    dpc_state *s = &r->s;
    const int T = j->threads;
    fd_status st = FD_OK;
    double t = fd_now();
    FD_TRY(fd_mpi_agree(choose_dc(o, ops, r->dev, s->p, T, &r->dc), NULL));
    r->t_dc = fd_now() - t;

    const uint64_t n = s->p->n;
    FD_ALLOC_GOTO(r->off, (size_t)mpi->size + 1, st, done);
    for (int k = 0; k <= mpi->size; k++) r->off[k] = n * (uint64_t)k / (uint64_t)mpi->size;
    const uint64_t i0 = r->off[mpi->rank], i1 = r->off[mpi->rank + 1];
    s->n = n;
    /* Touched on the threads: the device's copies into untouched pages
     * took 190 of the passes' 400 ms at 10^7 points (FD_GPU_VERBOSE). */
    s->rho = fd_big_zalloc_touched(n * sizeof *s->rho, T);
    s->delta = fd_big_zalloc_touched(n * sizeof *s->delta, T);
    s->gamma = fd_big_zalloc_touched(n * sizeof *s->gamma, T);
    s->parent = fd_big_zalloc_touched(n * sizeof *s->parent, T);
    s->labels = fd_big_zalloc_touched(n * sizeof *s->labels, T);
    st = s->rho && s->delta && s->gamma && s->parent && s->labels ? FD_OK : fd_fail(FD_ERR_NOMEM, "out of memory");
    t = fd_now();
    fd_progress prog = {0};
    fd_progress_start(&prog, "points (rho)", i1 - i0, !fd_job_speaks(j));
    if (st == FD_OK) st = ops->rho_rows(r->dev, s->p, r->dc, o->kernel, i0, i1, T, s->rho + i0, &prog);
    fd_progress_stop(&prog);
    FD_TRY_GOTO(fd_mpi_agree(st, NULL), st, done);
    st = r->on_device ? ops->gather(r->dev, DPC_PASS_RHO, r->off, s->rho, NULL)
                      : fd_mpi_allgather_shares(s->rho, MPI_DOUBLE, r->off);
    FD_TRY_GOTO(fd_mpi_agree(st, NULL), st, done);
    r->t_rho = fd_now() - t;

    t = fd_now();
    fd_progress_start(&prog, "points (delta)", i1 - i0, !fd_job_speaks(j));
    st = ops->delta_rows(r->dev, s->p, s->rho, i0, i1, T, s->delta + i0, s->parent + i0, &prog);
    fd_progress_stop(&prog);
    FD_TRY_GOTO(fd_mpi_agree(st, NULL), st, done);
    if (r->on_device) st = ops->gather(r->dev, DPC_PASS_DELTA, r->off, s->delta, s->parent);
    else if ((st = fd_mpi_allgather_shares(s->delta, MPI_DOUBLE, r->off)) == FD_OK)
        st = fd_mpi_allgather_shares(s->parent, MPI_INT64_T, r->off);
    FD_TRY_GOTO(fd_mpi_agree(st, NULL), st, done);
    r->t_delta = fd_now() - t;

    t = fd_now();
    st = dpc_centers(s->p, s->rho, s->delta, s->parent, &o->centers, s->gamma, s->labels, &s->centers, &s->k, &s->rep);
    if (st == FD_OK) st = ops->labels(r->dev, n, s->parent, s->labels);
    FD_TRY_GOTO(fd_mpi_agree(st, NULL), st, done);
    if (o->halo) {
        s->border = calloc(s->k + 1, sizeof *s->border);
        s->core = malloc(n * sizeof *s->core);
        st = s->border && s->core ? FD_OK : fd_fail(FD_ERR_NOMEM, "out of memory");
        fd_progress_start(&prog, "points (halo)", i1 - i0, !fd_job_speaks(j));
        if (st == FD_OK) st = dpc_halo_border(s->p, r->dc, s->rho, s->labels, s->k, i0, i1, T, s->border, &prog);
        fd_progress_stop(&prog);
        FD_TRY_GOTO(fd_mpi_agree(st, NULL), st, done);
        if (mpi->size > 1 && fd_mpi_active())
            MPI_CHECK_GOTO(MPI_Allreduce(MPI_IN_PLACE, s->border, (int)s->k + 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), st,
                           done);
        dpc_halo_core(n, s->rho, s->labels, s->border, s->core);
    }
    r->ari = s->p->truth ? dpc_ari(s->core ? s->core : s->labels, s->p->truth, n) : NAN;
    /* Rank 0 writes the result: it alone assigns --predict's points. */
    if (s->q && mpi->rank == 0) st = dpc_predict(s->p, s->rho, s->labels, r->dc, o->kernel, s->q, T, &s->pred);
    FD_TRY_GOTO(fd_mpi_agree(st, NULL), st, done);
    r->t_assign = fd_now() - t;
    /* The device's part is done: its state goes now, and the context
     * with it while rank 0 writes (fd_job_device_done). */
    if (r->dev) r->ops->close(r->dev);
    r->dev = NULL;
    fd_job_device_done(j);
done:
    return st;
}

/* Rank 0 writes the one file, and the plot: the plot first, so that a
 * failure of either leaves the old result in place (the file is renamed
 * into place last). */
static fd_status commit(fd_job *j)
{
    dpc_run *r = j->w;
    const dpc_opts *o = r->o;
    const dpc_state *s = &r->s;
    if (j->mpi.rank != 0) return FD_OK;
    if (o->plot)
        FD_TRY(dpc_plot_write(o->plot, s->p, s->rho, s->delta, s->labels, s->core, s->centers, s->k,
                              s->rep.automatic ? s->rep.gamma_thr : NAN));
    if (!j->out.result) return FD_OK;
    const char *sha = NULL, *q_sha = NULL;
    FD_TRY(dpc_points_sha256(r->s.p, &sha));
    if (s->q) FD_TRY(dpc_points_sha256(r->s.q, &q_sha));
    const dpc_result res = {s->p,       r->dc,      s->rho,     s->delta,     s->gamma,      s->parent,
                            s->centers, s->labels,  s->core,    s->k,         r->ari,        j->read_s,
                            r->t_dc,    r->t_rho,   r->t_delta, r->t_assign, j->mpi.size,   j->threads,
                            s->q,       s->q ? &s->pred : NULL, &s->rep, sha, q_sha};
    return dpc_h5_write(j->out.result, o, &res);
}

static void report(fd_job *j)
{
    const dpc_run *r = j->w;
    const dpc_opts *o = r->o;
    const int T = j->threads, gpu = r->ops->dev.devices != NULL;
    fprintf(stderr, "%u clusters in %llu points (d = %u, %s kernel, d_c = %.6g) in %.3f s", r->s.k,
            (unsigned long long)r->s.p->n, r->s.p->d, o->kernel == DPC_CUTOFF ? "cutoff" : "Gaussian", r->dc,
            fd_now() - j->t0);
    if (j->mpi.size > 1) fprintf(stderr, ", %d ranks x ", j->mpi.size);
    else fprintf(stderr, ", ");
    if (gpu) fprintf(stderr, "1 GPU (rank 0: GPU %d) and ", j->device);
    fprintf(stderr, "%d thread%s", T, T == 1 ? "" : "s");
    if (gpu) fprintf(stderr, " a rank");
    if (gpu && j->mpi.size > 1) fprintf(stderr, " (all-gathers by %s)", r->on_device ? "NCCL" : "MPI");
    if (!isnan(r->ari) && o->cols.labels) fprintf(stderr, "; ARI %.4f against %s", r->ari, o->cols.labels);
    else if (!isnan(r->ari)) fprintf(stderr, "; ARI %.4f against column %u", r->ari, o->cols.label);
    if (r->s.q) fprintf(stderr, "; assigned the %llu points of %s", (unsigned long long)r->s.q->n, o->predict);
    if (j->out.result) fprintf(stderr, "; wrote %s", j->out.result);
    if (o->plot) fprintf(stderr, "%s %s", j->out.result ? " and" : "; wrote", o->plot);
    fputc('\n', stderr);
    const dpc_auto_report *a = &r->s.rep;
    if (a->automatic) {
        fprintf(stderr, "automatic centres: %llu by the gap rule, %llu by the outlier rule (gamma > %.6g: log gamma over "
                "its median by more than z = %.3f robust sd, alpha %g over %llu points); %s rule used",
                (unsigned long long)a->gap, (unsigned long long)a->outliers, a->gamma_thr, a->z, a->alpha,
                (unsigned long long)r->s.p->n, o->centers.outliers ? "the outlier" : "the gap");
        if (a->gap != a->outliers) fprintf(stderr, "; they disagree: look at the decision graph (--plot), or give --centers K");
        fputc('\n', stderr);
    }
    if (o->stats)
        fprintf(stderr, "load %.3f s, d_c %.3f s, rho %.3f s, delta %.3f s, centres and labels %.3f s\n", j->read_s,
                r->t_dc, r->t_rho, r->t_delta, r->t_assign);
    if (o->stats) fd_job_print_phases(j, stderr);
}

static void close_run(fd_job *j, fd_status st)
{
    dpc_run *r = j->w;
    (void)st;
    free(r->off);
    if (r->dev) r->ops->close(r->dev);
    state_free(&r->s);
}

static const fd_job_ops dpc_job_ops = {
    .read = read_points,
    .check_input = same_points,
    .backend_for = backend_for,
    .setup = setup,
    .run = run,
    .commit = commit,
    .report = report,
    .close = close_run,
};

fd_status dpc_job_run(const dpc_opts *o)
{
    dpc_run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.ari = NAN;
    FD_TRY(dpc_backend_get(o->backend, &r.ops));
    const fd_job_opts jo = {.workload = "dpc", .outdir = o->outdir, .force = o->force, .quiet = o->quiet,
                            .stats = o->stats, .threads = o->threads};
    return fd_job_run(&dpc_job_ops, &jo, &r.ops->dev, &r);
}
