/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA backend of bcp: the rank's block and the factors go to its
 * GPU once and stay (src/cuda/bcp_gpu.cu); a sweep's I_n x R work runs
 * there, and only R x R matrices cross to the host.  Between the ranks'
 * GPUs each mode's MTTKRP is summed by an NCCL all-reduce on the devices;
 * without NCCL (not built, FD_NCCL=off) its rows go through the host
 * with bcp_comm (a reduce-scatter, then an all-gather of the updated
 * rows). */
#include "bcp_backend.h"

#include "bcp_gpu.h"
#include "bcp_masked_gpu.h"
#include "../cuda/cublas_load.h"
#include "../common/env.h"
#include "../cuda/fdcuda.h"
#include "../mpi/nccl_comm.h"

#include <stdlib.h>

typedef struct {
    bcp_gpu *g;
    const bcp_tensor *t;
    fd_nccl *nccl;   /* NULL: the sums through the host */
    uint32_t Rmax;
    int host_sweep; /* FD_BCP_GPU_SWEEP=host: the R x R steps on the host, a wait a mode */
    double *host;    /* the host's copy of M or A(n) for bcp_comm (the longest mode's rows x Rmax) */
} cuda_state;

static int cuda_devices(void) { return fd_cuda_device_count(); }

static void cuda_close(void *state)
{
    cuda_state *s = state;
    if (!s) return;
    fd_nccl_close(&s->nccl);
    bcp_gpu_destroy(&s->g);
    free(s->host);
    free(s);
}

static fd_status cuda_open(void **state, const bcp_tensor *t, uint32_t R, int device)
{
    cuda_state *s = calloc(1, sizeof *s);
    if (!s) return fd_fail(FD_ERR_NOMEM, "out of memory");
    s->t = t;
    s->Rmax = R;
    s->host_sweep = fd_env_switched("FD_BCP_GPU_SWEEP");
    fd_cuda_set_oom_hint("the rank's block of the tensor and its products must fit: use more ranks, or --fuse "
                         "K1xK2x... for sub-tensors that fit");
    const fd_status st = bcp_gpu_create(&s->g, device, t->x, t->order, t->dims, t->lo, t->full, bcp_tree_split(t), R);
    if (st != FD_OK) {
        cuda_close(s);
        return st;
    }
    *state = s;
    return FD_OK;
}

static fd_status cuda_connect(void *state, const fd_mpi *mpi)
{
    return fd_nccl_open(&((cuda_state *)state)->nccl, mpi);
}

/* The host copy for bcp_comm. */
static fd_status host_copy(cuda_state *s)
{
    if (s->host) return FD_OK;
    uint64_t Imax = 1;
    for (uint32_t n = 0; n < s->t->order; n++) Imax = s->t->full[n] > Imax ? s->t->full[n] : Imax;
    s->host = malloc(Imax * s->Rmax * sizeof *s->host);
    return s->host ? FD_OK : fd_fail(FD_ERR_NOMEM, "out of memory");
}

/* With NCCL an all-reduce of M, every rank then updating every row: one
 * collective a mode where a reduce-scatter and an all-gather took two
 * (the rows' update is a small DGEMM on each GPU), and the same bits on
 * every rank, as every rank updates the same sums in the same way. */
static fd_status cuda_sum_rows(void *state, const bcp_comm *comm, uint32_t n, uint64_t *o0, uint64_t *o1, int *whole)
{
    cuda_state *s = state;
    const uint64_t I = s->t->full[n], R = bcp_gpu_rank(s->g);
    *o0 = 0;
    *o1 = I;
    *whole = 1;
    if (s->nccl) return fd_nccl_allreduce(s->nccl, bcp_gpu_M(s->g), I * R, bcp_gpu_stream(s->g));
    if (!comm || !comm->sum_rows) return FD_OK;
    *whole = 0;
    FD_TRY(host_copy(s));
    FD_TRY(bcp_gpu_copy(s->g, s->host, bcp_gpu_M(s->g), I * R, 1));
    FD_TRY(comm->sum_rows(comm->ctx, s->host, I, (uint32_t)R, o0, o1));
    return bcp_gpu_copy(s->g, bcp_gpu_M(s->g) + *o0 * R, s->host + *o0 * R, (*o1 - *o0) * R, 0);
}

static fd_status cuda_gather_rows(void *state, const bcp_comm *comm, uint32_t n)
{
    cuda_state *s = state;
    const uint64_t I = s->t->full[n], R = bcp_gpu_rank(s->g);
    if (s->nccl || !comm || !comm->gather_rows) return FD_OK; /* every rank has every row */
    FD_TRY(host_copy(s));
    /* The whole mode down, so that the host copy's other rows are
     * defined; only this rank's share matters to the gather. */
    FD_TRY(bcp_gpu_copy(s->g, s->host, bcp_gpu_A(s->g, n), I * R, 1));
    FD_TRY(comm->gather_rows(comm->ctx, s->host, I, (uint32_t)R));
    return bcp_gpu_copy(s->g, bcp_gpu_A(s->g, n), s->host, I * R, 0);
}

static fd_status cuda_put(void *state, const double *const *A, uint32_t R)
{
    return bcp_gpu_put(((cuda_state *)state)->g, A, R);
}

static fd_status cuda_get(void *state, double *const *A) { return bcp_gpu_get(((cuda_state *)state)->g, A); }

static fd_status cuda_contract(void *state, int side, int threads)
{
    (void)threads;
    return bcp_gpu_contract(((cuda_state *)state)->g, side);
}

static fd_status cuda_mttkrp(void *state, uint32_t n, int threads)
{
    (void)threads;
    return bcp_gpu_mttkrp(((cuda_state *)state)->g, n);
}

static fd_status cuda_update(void *state, uint32_t n, const double *Sigma, double tau, int nonneg, uint64_t o0,
                             uint64_t o1)
{
    return bcp_gpu_update(((cuda_state *)state)->g, n, Sigma, tau, nonneg, o0, o1);
}

static fd_status cuda_gram(void *state, uint32_t n, uint64_t o0, uint64_t o1, double *G, double *v)
{
    return bcp_gpu_gram(((cuda_state *)state)->g, n, o0, o1, G, v);
}

static fd_status cuda_scale(void *state, const double *s) { return bcp_gpu_scale(((cuda_state *)state)->g, s); }

static fd_status cuda_keep(void *state, const uint32_t *keep, uint32_t K)
{
    return bcp_gpu_keep(((cuda_state *)state)->g, keep, K);
}

/* The modes as bcp.c's sweep runs them, with Sigma_n on the device: the
 * host queues the whole sweep and waits once, at its end.  Where M's rows
 * go through the host (ranks without NCCL) the host is between the modes
 * anyway: not here. */
static fd_status cuda_sweep_modes(void *state, const bcp_comm *comm, bcp_sweep_io *io, int *done)
{
    cuda_state *s = state;
    const bcp_tensor *t = s->t;
    const uint32_t N = t->order, R = bcp_gpu_rank(s->g);
    *done = 0;
    if (s->host_sweep || R > BCP_GPU_SWEEP_RMAX || (!s->nccl && comm && comm->sum_rows)) return FD_OK;
    FD_TRY(bcp_gpu_sweep_begin(s->g, (const double *const *)io->EAA, io->lambda));
    for (uint32_t n = 0; n < N; n++) {
        const int side = bcp_sweep_contract_side(t, n);
        if (side >= 0) FD_TRY(bcp_gpu_contract(s->g, side));
        FD_TRY(bcp_gpu_mttkrp(s->g, n));
        if (s->nccl) FD_TRY(fd_nccl_allreduce(s->nccl, bcp_gpu_M(s->g), t->full[n] * R, bcp_gpu_stream(s->g)));
        FD_TRY(bcp_gpu_sweep_mode(s->g, n, io->tau, io->nonneg));
    }
    FD_TRY(bcp_gpu_sweep_end(s->g, io->Sigma, io->AA, io->EAA, io->logdet, &io->yx, &io->bad));
    *done = 1;
    return FD_OK;
}

static int cuda_available(void) { return cuda_devices() > 0; }

static fd_status cuda_mode_gram(void *state, uint32_t n, double *G, int *done)
{
    return bcp_gpu_mode_gram(((cuda_state *)state)->g, n, G, done);
}

/* Beside the read: the context, and cuBLAS's libraries (over 500 MB, some
 * 0.1 s to load), which the block's setup would otherwise wait for. */
static void cuda_warm(int device)
{
    fd_cuda_warm(device);
    fd_cublas_preload();
}

/* The masked fit's sums (bcp_masked_gpu.h): the state is the engine. */
static fd_status masked_open(void **state, const bcp_tensor *t, uint32_t R, int device)
{
    fd_cuda_set_oom_hint("with missing entries the whole tensor, twice, and its products must fit on each rank's GPU: "
                         "use --backend cpu, or a lower --rank");
    return bcp_mgpu_create((bcp_mgpu **)state, device, t->x, t->observed, t->order, t->dims, R);
}

static void masked_close(void *state)
{
    bcp_mgpu *g = state;
    bcp_mgpu_destroy(&g);
}

static fd_status masked_put(void *state, uint32_t n, const double *A, const double *E, uint32_t R)
{
    return bcp_mgpu_put(state, n, A, E, R);
}

static fd_status masked_sums(void *state, uint32_t n, int outer, uint64_t i0, uint64_t i1, double *B, double *v)
{
    return bcp_mgpu_sums(state, n, outer, i0, i1, B, v);
}

static const bcp_masked_dev cuda_masked = {
    .open = masked_open, .close = masked_close, .put = masked_put, .sums = masked_sums};

const struct bcp_ops bcp_cuda_ops = {
    .dev = {.name = "cuda", .available = cuda_available, .devices = cuda_devices, .open_device = fd_cuda_open, .warm_device = cuda_warm},
    .open = cuda_open,
    .close = cuda_close,
    .connect = cuda_connect,
    .put = cuda_put,
    .get = cuda_get,
    .contract = cuda_contract,
    .mttkrp = cuda_mttkrp,
    .sum_rows = cuda_sum_rows,
    .update = cuda_update,
    .gather_rows = cuda_gather_rows,
    .gram = cuda_gram,
    .scale = cuda_scale,
    .keep = cuda_keep,
    .mode_gram = cuda_mode_gram,
    .sweep_modes = cuda_sweep_modes,
    .masked = &cuda_masked,
};
