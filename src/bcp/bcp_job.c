/* The bcp run (see bcp_job.h). */
#include "bcp_job.h"

#include "../common/clock.h"
#include "../io/h5part.h"
#include "bcp_h5.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

fd_status bcp_job_run(const bcp_job_opts *o, const fd_mpi *mpi)
{
    fd_status st = FD_OK;
    bcp_tensor *t = NULL;
    bcp_model m;
    h5part_set out;
    memset(&m, 0, sizeof m);
    if (mpi->size > 1)
        return fd_fail(FD_ERR_USAGE, "bcp runs on one rank for now (this job has %d); run it without mpirun", mpi->size);
    double t0 = fd_now();
    FD_TRY(h5part_set_open(&out, o->outdir, "bcp.h5", o->force, 0, 1));
    if ((st = bcp_tensor_read(&t, o->input)) != FD_OK) goto done;
    const double t_load = fd_now() - t0, t1 = fd_now();
    fd_progress prog = {0};
    fd_progress_start(&prog, "sweeps", o->quiet);
    st = bcp_fit(t, &o->fit, &m, &prog);
    fd_progress_stop(&prog);
    if (st != FD_OK) goto done;
    const double t_fit = fd_now() - t1;
    if (o->outdir) FD_TRY_GOTO(bcp_h5_write(out.master, o, t, &m, t_load, t_fit), st, done);
    if (!o->quiet) {
        fprintf(stderr, "rank %u (from %u) of a", m.R, o->fit.rank);
        for (uint32_t n = 0; n < t->order; n++) fprintf(stderr, "%s%llu", n ? " x " : " ", (unsigned long long)t->dims[n]);
        fprintf(stderr, " tensor: fit %.6f after %u sweeps (%s) in %.3f s", m.fit[m.iters - 1], m.iters,
                m.converged ? "converged" : "--max-iter reached", fd_now() - t0);
        if (o->outdir) fprintf(stderr, "; wrote %s", out.master);
        fputc('\n', stderr);
        if (o->stats)
            fprintf(stderr, "load %.3f s, fit %.3f s (%.3f ms a sweep)\n", t_load, t_fit,
                    1e3 * t_fit / (m.iters ? m.iters : 1));
    }
done:
    h5part_set_close(&out, st);
    bcp_model_free(&m);
    bcp_tensor_destroy(&t);
    return st;
}
