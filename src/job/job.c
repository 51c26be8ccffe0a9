/* SPDX-License-Identifier: BSD-3-Clause */
/* The job skeleton (see job.h). */
#include "job.h"

#include "../common/clock.h"
#include "../common/env.h"
#include "../io/h5util.h"
#include "../mpi/device_warm.h"
#include "../mpi/placement.h"

#include <stdlib.h>
#include <string.h>

/* The read, with the backend's device started beside it.  With
 * place_first, placing the rank on a GPU (which may fail: more ranks
 * than GPUs on the node) stops the job before it reads; else the rank is
 * placed after the read (place_stage), as a fallback to the CPU may not
 * need a GPU, and the GPUs are counted beside the read too. */
static fd_status read_stage(fd_job *j)
{
    fd_status st = fd_warm_start(&j->warm, &j->mpi, j->dev, j->o->place_first);
    if (j->o->place_first) st = fd_mpi_agree(st, NULL);
    /* One rank only: a late device's open is not agreed across ranks.  A
     * node that cannot have the device refuses the backend before the
     * run (place_stage), as the run might never open it. */
    j->device_late = !j->o->place_first && j->mpi.size == 1 && j->ops->device_late && j->ops->device_late(j) &&
                     fd_backend_present(j->dev);
    double t = fd_now();
    if (st == FD_OK && j->ops->read) st = j->ops->read(j);
    j->input_s = fd_now() - t;
    t = fd_now();
    if (!j->device_late) fd_warm_join(&j->warm);
    j->warm_wait_s = fd_now() - t;
    if (j->o->place_first) j->device = j->warm.device;
    return fd_mpi_agree(st, NULL);
}

/* The rank's backend for what was read, its GPU and the GPU's context.
 * Collective: every rank has the same backend. */
static fd_status place_stage(fd_job *j)
{
    fd_status st = FD_OK;
    if (j->ops->backend_for) {
        const fd_device_ops *b = j->ops->backend_for(j);
        if (b != j->dev) j->device = -1;
        j->dev = b;
    }
    /* Counting the GPUs waits for the driver's start on the warm thread:
     * a late device's fd_job_device_open counts them and places the rank. */
    if (j->dev->devices && j->device_late) j->device_pending = 1;
    /* A backend named without asking (fd_backend_find) is asked here,
     * beside the read the driver's start was. */
    else if (j->dev->devices && !fd_backend_available(j->dev)) st = fd_backend_refuse(j->dev);
    if (st == FD_OK && j->dev->devices && !j->device_pending && j->device < 0)
        st = fd_place_device(&j->mpi, j->dev->devices(), &j->device);
    if (st == FD_OK && j->dev->devices && !j->device_pending && j->dev->open_device)
        st = j->dev->open_device(j->device);
    return fd_mpi_agree(st, NULL);
}

int fd_job_device_ready(fd_job *j) { return !j->device_pending || fd_warm_ready(&j->warm); }

fd_status fd_job_device_open(fd_job *j)
{
    if (!j->device_pending) return FD_OK;
    const double t = fd_now();
    fd_warm_join(&j->warm);
    j->late_wait_s = fd_now() - t;
    j->device_pending = 0;
    if (!fd_backend_available(j->dev)) return fd_backend_refuse(j->dev);
    FD_TRY(fd_place_device(&j->mpi, j->dev->devices(), &j->device));
    return j->dev->open_device ? j->dev->open_device(j->device) : FD_OK;
}

typedef struct {
    void (*release)(int device);
    int device;
} release_args;

static void *release_run(void *arg)
{
    release_args *a = arg;
    a->release(a->device);
    free(a);
    return NULL;
}

void fd_job_device_done(fd_job *j)
{
    if (j->releasing || j->device_pending || !j->dev->release_device || j->device < 0 ||
        fd_env_switched("FD_GPU_RELEASE"))
        return;
    release_args *a = malloc(sizeof *a);
    if (!a) return; /* the process's end releases it */
    *a = (release_args){j->dev->release_device, j->device};
    j->releasing = pthread_create(&j->release, NULL, release_run, a) == 0;
    if (!j->releasing) free(a);
}

fd_status fd_job_run(const fd_job_ops *ops, const fd_job_opts *o, const fd_device_ops *dev, void *w)
{
    fd_job job, *j = &job;
    memset(j, 0, sizeof *j);
    j->o = o;
    j->ops = ops;
    j->dev = dev;
    j->device = -1;
    j->w = w;
    j->t0 = fd_now();
    fd_status st = fd_mpi_query(&j->mpi);
    if (st != FD_OK) return st;
    if (ops->validate) st = ops->validate(j);
    st = fd_mpi_agree(st, NULL);
    const rd_mode mode = o->resume ? RD_RESUME : o->force ? RD_FORCE : RD_NEW;
    /* Results, parts and checkpoints are HDF5; a run without an output
     * directory may never start the library (h5u_start). */
    if (st == FD_OK) {
        if (o->outdir) h5u_start();
        st = rd_open(&j->out, o->outdir, o->workload, mode, &j->mpi, o->parts);
    } else {
        j->out.lock_fd = -1;
    }
    st = fd_mpi_agree(st, NULL);
    /* The rank's share of the cores, for the read's threads too. */
    j->threads = o->threads > 0 ? o->threads : fd_place_threads(&j->mpi);
    h5u_set_threads(j->threads);
    if (st == FD_OK && ops->backend_by_size) j->dev = ops->backend_by_size(j);
    if (st == FD_OK) st = read_stage(j);
    j->read_s = fd_now() - j->t0;
    if (st == FD_OK && ops->check_input) st = fd_mpi_agree(ops->check_input(j), NULL);
    if (st == FD_OK) st = place_stage(j);
    if (st == FD_OK && ops->setup) st = fd_mpi_agree(ops->setup(j), NULL);
    j->setup_s = fd_now() - j->t0;
    double t = fd_now();
    /* run and commit agree themselves: after an MPI failure the ranks can
     * no longer meet, and only the workload knows where that can be. */
    if (st == FD_OK && ops->run) st = ops->run(j);
    j->run_s = fd_now() - t;
    t = fd_now();
    if (st == FD_OK && ops->commit) st = ops->commit(j);
    if (st != FD_ERR_MPI) st = fd_mpi_agree(st, NULL);
    j->commit_s = fd_now() - t;
    if (st == FD_OK && ops->report && fd_job_speaks(j)) ops->report(j);
    if (ops->close) ops->close(j, st);
    rd_close(&j->out, st);
    /* A late device never opened: the job ends without waiting for its
     * start, unless MPI's end (in main) might touch the device too. */
    if (j->device_pending && !fd_mpi_active()) fd_warm_abandon(&j->warm);
    else fd_warm_join(&j->warm);
    if (j->releasing) pthread_join(j->release, NULL);
    return st;
}

int fd_job_speaks(const fd_job *j) { return !j->o->quiet && j->mpi.rank == 0; }

void fd_job_print_phases(const fd_job *j, FILE *f)
{
    fprintf(f, "read %.3f s (the input %.3f s, then %.3f s waiting for the GPU's start-up beside it), setup %.3f s (the "
            "output directory, the device), run %.3f s, output %.3f s\n",
            j->read_s, j->input_s, j->warm_wait_s, j->setup_s - j->read_s, j->run_s, j->commit_s);
}
