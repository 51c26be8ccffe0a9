/* The CUDA backend of bcp: the rank's block goes to its GPU once; the
 * dimension tree's contractions (a DGEMM each) and the modes' MTTKRPs run
 * there (src/cuda/bcp_gpu.cu); the rest of the sweep stays on the host. */
#include "bcp_backend.h"

#include "../cuda/bcp_gpu.h"
#include "../cuda/fdcuda.h"

static int cuda_devices(void) { return fd_cuda_device_count(); }

static fd_status cuda_open(void **state, const bcp_tensor *t, uint32_t R, int device)
{
    bcp_gpu *g = NULL;
    fd_cuda_set_oom_hint("the rank's block of the tensor and its products must fit: use more ranks, or --fuse "
                         "K1xK2x... for sub-tensors that fit");
    FD_TRY(bcp_gpu_create(&g, device, t->x, t->order, t->dims, bcp_tree_split(t), R));
    *state = g;
    return FD_OK;
}

static void cuda_close(void *state)
{
    bcp_gpu *g = state;
    bcp_gpu_destroy(&g);
}

static fd_status cuda_contract(void *state, const bcp_tensor *t, int side, const double *const *A, uint32_t R,
                               int threads)
{
    (void)t, (void)threads;
    return bcp_gpu_contract(state, side, A, R);
}

static fd_status cuda_mttkrp(void *state, const bcp_tensor *t, uint32_t n, const double *const *A, uint32_t R,
                             int threads, double *M)
{
    (void)t, (void)threads;
    return bcp_gpu_mttkrp(state, n, A, R, M);
}

const struct bcp_ops bcp_cuda_ops = {"cuda", cuda_devices, fd_cuda_open, cuda_open, cuda_close, cuda_contract,
                                     cuda_mttkrp};
