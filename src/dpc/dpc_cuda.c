/* CUDA backend of dpc: the points go to the rank's GPU once; each pass is
 * one launch over the rank's rows (src/cuda/dpc_gpu.cu). */
#include "dpc_backend.h"

#include "../cuda/dpc_gpu.h"
#include "../cuda/fdcuda.h"

static int cuda_devices(void) { return fd_cuda_device_count(); }

static int cuda_supports(const dpc_points *p) { return p->d <= DPC_GPU_MAX_D; }

static fd_status cuda_open(void **state, const dpc_points *p, int device)
{
    dpc_gpu *g = NULL;
    FD_TRY(dpc_gpu_create(&g, device, p->xt, p->n, p->d));
    *state = g;
    return FD_OK;
}

static void cuda_close(void *state)
{
    dpc_gpu *g = state;
    dpc_gpu_destroy(&g);
}

static fd_status cuda_rho(void *state, const dpc_points *p, double dc, int kernel, uint64_t i0, uint64_t i1,
                          int threads, double *rho, fd_progress *prog)
{
    (void)p, (void)threads;
    FD_TRY(dpc_gpu_rho(state, dc, kernel, i0, i1, rho));
    if (prog) fd_progress_add(prog, i1 - i0);
    return FD_OK;
}

static fd_status cuda_delta(void *state, const dpc_points *p, const double *rho, uint64_t i0, uint64_t i1, int threads,
                            double *delta, int64_t *parent, fd_progress *prog)
{
    (void)p, (void)threads;
    FD_TRY(dpc_gpu_delta(state, rho, i0, i1, delta, parent));
    if (prog) fd_progress_add(prog, i1 - i0);
    return FD_OK;
}

const struct dpc_ops dpc_cuda_ops = {
    "cuda", cuda_devices, fd_cuda_open, cuda_open, cuda_close, cuda_supports, cuda_rho, cuda_delta,
};
