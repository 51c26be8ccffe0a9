/* The MTTKRP of bcp on one GPU: the CUDA backend's device engine.  Plain
 * C interface.  A rank's block of the tensor goes to the device once (as
 * doubles, C order); each call takes the block's rows of every factor and
 * returns M = Y_(n) times the Khatri-Rao product of the other modes for
 * the block's rows of mode n, in two steps without the full Khatri-Rao
 * product: one cuBLAS DGEMM of the block against the product of the modes
 * after n (or before n: the smaller intermediate), then a kernel that
 * folds in the other side. */
#ifndef FD_BCP_GPU_H
#define FD_BCP_GPU_H

#include "../common/status.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bcp_gpu bcp_gpu;

/* x: the block (dims[0] x ... x dims[order-1], C order); Rmax: the
 * largest rank the calls will ask for. */
fd_status bcp_gpu_create(bcp_gpu **out, int device, const double *x, uint32_t order, const uint64_t *dims,
                         uint32_t Rmax);
void bcp_gpu_destroy(bcp_gpu **g);
/* M (dims[n] x R, row-major) from A[m] (dims[m] x R, row-major, host). */
fd_status bcp_gpu_mttkrp(bcp_gpu *g, uint32_t n, const double *const *A, uint32_t R, double *M);

#ifdef __cplusplus
}
#endif

#endif
