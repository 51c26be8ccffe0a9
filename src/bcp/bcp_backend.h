/* The backends of bcp: the MTTKRP of a rank's block, behind one table.
 * Everything else of a sweep (R x R algebra, I_n x R updates, the bound)
 * is small and runs on the host for every backend, so that the backends
 * differ only in the MTTKRP's order of summation.  The CPU backend is
 * always built; the CUDA backend where nvcc was found. */
#ifndef FD_BCP_BACKEND_H
#define FD_BCP_BACKEND_H

#include "tensor.h"

struct bcp_ops {
    const char *name;
    int (*devices)(void);                 /* GPUs on this node; NULL: not a GPU backend */
    fd_status (*open_device)(int device); /* NULL: nothing to do */
    /* Per-run state for block t and ranks up to R (the block onto the
     * device, scratch space). */
    fd_status (*open)(void **state, const bcp_tensor *t, uint32_t R, int device);
    void (*close)(void *state);
    /* The sweep's MTTKRPs by a dimension tree (docs/algorithms.md): with
     * h = bcp_tree_split(t), contract(side 0) contracts the block with the
     * Khatri-Rao product of modes [h, N), contract(side 1) with that of
     * modes [0, h): one pass over the block each, leaving an intermediate
     * of span x R for the modes of that side.  A[m] is the block's rows of
     * factor m (t->dims[m] x R, row-major). */
    fd_status (*contract)(void *state, const bcp_tensor *t, int side, const double *const *A, uint32_t R, int threads);
    /* M (t->dims[n] x R, row-major, overwritten) = the block's mode-n
     * unfolding times the Khatri-Rao product of the other modes' rows,
     * from the intermediate of n's side, which must have been contracted
     * since the other side's factors last changed. */
    fd_status (*mttkrp)(void *state, const bcp_tensor *t, uint32_t n, const double *const *A, uint32_t R, int threads,
                        double *M);
};

extern const struct bcp_ops bcp_cpu_ops;
#if defined(FD_HAVE_CUDA) && FD_HAVE_CUDA
extern const struct bcp_ops bcp_cuda_ops;
#endif

fd_status bcp_backend_get(const char *name, const struct bcp_ops **ops);

#endif
