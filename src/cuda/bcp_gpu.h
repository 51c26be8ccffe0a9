/* The MTTKRPs of bcp on one GPU: the CUDA backend's device engine.  Plain
 * C interface.  A rank's block of the tensor goes to the device once (as
 * doubles, C order) and stays; the dimension tree of bcp_backend.h runs
 * there: a contraction of the block with one half's Khatri-Rao product is
 * one cuBLAS DGEMM (the block read once), and each mode's MTTKRP is a
 * kernel over the small intermediate of its half. */
#ifndef FD_BCP_GPU_H
#define FD_BCP_GPU_H

#include "../common/status.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bcp_gpu bcp_gpu;

/* x: the block (dims[0] x ... x dims[order-1], C order); h: the tree's
 * split (bcp_tree_split); Rmax: the largest rank the calls will ask for. */
fd_status bcp_gpu_create(bcp_gpu **out, int device, const double *x, uint32_t order, const uint64_t *dims, uint32_t h,
                         uint32_t Rmax);
void bcp_gpu_destroy(bcp_gpu **g);
/* The intermediate of side 0 (modes [0, h)) or 1 (modes [h, N)) from
 * A[m] (dims[m] x R, row-major, host): the block times the other side's
 * Khatri-Rao product. */
fd_status bcp_gpu_contract(bcp_gpu *g, int side, const double *const *A, uint32_t R);
/* M (dims[n] x R, row-major, host) from the intermediate of n's side. */
fd_status bcp_gpu_mttkrp(bcp_gpu *g, uint32_t n, const double *const *A, uint32_t R, double *M);

#ifdef __cplusplus
}
#endif

#endif
