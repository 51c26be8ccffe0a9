/* SPDX-License-Identifier: BSD-3-Clause */
/* The backends of bcp, behind one table.  A backend holds the rank's
 * block and, between sweeps, the factors (all rows of every mode): the
 * CPU backend in host memory, the CUDA backend on the rank's GPU, so that
 * a sweep moves only R x R matrices between the host and the device.
 * Every I_n x R step of a sweep (the MTTKRP, the means' update, the Gram
 * matrices, the rescaling and pruning of columns) is the backend's; the
 * R x R algebra, lambda, tau and the bound run on the host (bcp.c), the
 * same for every backend, except that a backend may take a sweep's
 * per-mode R x R steps too (sweep_modes: the CUDA backend, so that its
 * device does not wait for the host four times a sweep).  The CPU
 * backend is always built; the CUDA backend where nvcc was found. */
#ifndef FD_BCP_BACKEND_H
#define FD_BCP_BACKEND_H

#include "../common/backend.h"
#include "../mpi/fdmpi.h"
#include "bcp.h"
#include "bcp_masked.h"
#include "tensor.h"

/* A sweep's modes in one call (sweep_modes): what goes in and comes out. */
typedef struct {
    double tau;
    const double *lambda;              /* R */
    int nonneg;
    double *const *Sigma, *const *AA; /* out: every mode's (R x R) */
    double *const *EAA;                /* in and out */
    double *logdet;                    /* out: ln det Sigma_n, every mode */
    double yx;                         /* out: <Y, [[A]]> */
    uint32_t bad;                      /* out: n + 1 where mode n's matrix was not positive definite; 0: none */
} bcp_sweep_io;

struct bcp_ops {
    fd_device_ops dev; /* name, devices, the context (common/backend.h) */
    /* Per-run state for block t (which must outlive it) and ranks up to
     * R: the block onto the device, room for the factors' t->full[n]
     * rows. */
    fd_status (*open)(void **state, const bcp_tensor *t, uint32_t R, int device);
    void (*close)(void *state);
    /* The backend's own collectives between the ranks (NCCL between
     * GPUs); collective over the job's ranks.  NULL, or none found: the
     * sums go through bcp_comm on the host. */
    fd_status (*connect)(void *state, const fd_mpi *mpi);
    /* The factors in and out: A[n] is t->full[n] x R, row-major.  Every
     * other call works at the rank of the last put or keep. */
    fd_status (*put)(void *state, const double *const *A, uint32_t R);
    fd_status (*get)(void *state, double *const *A);
    /* The sweep's MTTKRPs by a dimension tree (docs/algorithms.md): with
     * h = bcp_tree_split(t), contract(side 0) contracts the block with the
     * Khatri-Rao product of modes [h, N) of the factors' block rows,
     * contract(side 1) with that of modes [0, h): one pass over the block
     * each, leaving an intermediate for the modes of that side. */
    fd_status (*contract)(void *state, int side, int threads);
    /* The backend's M (t->full[n] x R) = the block's mode-n unfolding
     * times the Khatri-Rao product of the other modes' block rows, in the
     * block's rows and zero elsewhere, from the intermediate of n's side
     * (contracted since the other side's factors last changed). */
    fd_status (*mttkrp)(void *state, uint32_t n, int threads);
    /* M summed over the ranks into this rank's share of the rows [*o0,
     * *o1) (bcp_comm's sum_rows; all rows without it).  *whole: the
     * sum left every rank with every row, the same bits on each (one
     * rank, or NCCL's all-reduce), so that there is nothing to gather
     * and nothing of the rows' to sum again. */
    fd_status (*sum_rows)(void *state, const bcp_comm *comm, uint32_t n, uint64_t *o0, uint64_t *o1, int *whole);
    /* Rows [o0, o1) of A(n) = tau M Sigma (R x R, host; projected on >= 0
     * with nonneg). */
    fd_status (*update)(void *state, uint32_t n, const double *Sigma, double tau, int nonneg, uint64_t o0, uint64_t o1);
    /* Every rank's share of A(n)'s rows to every rank (comm->gather_rows),
     * so that every rank holds the same bits; only after a sum_rows that
     * left *whole = 0. */
    fd_status (*gather_rows)(void *state, const bcp_comm *comm, uint32_t n);
    /* G (R x R, host) = A(n)^T A(n) over all rows, exactly symmetric and
     * the same bits on every rank (the same rows, summed in one order);
     * with v, also *v = <M, A(n)> over rows [o0, o1) (one wait for the
     * device where there is one). */
    fd_status (*gram)(void *state, uint32_t n, uint64_t o0, uint64_t o1, double *G, double *v);
    /* Every mode's update of a sweep in one call, with no wait for the
     * host between the modes: for n = 0 .. N-1 the contraction where a
     * side begins, the MTTKRP and its sum, Sigma_n = (tau Psi_n +
     * diag(lambda))^-1 (Psi_n: the Hadamard product of the other modes'
     * E[A^T A]), A(n) = tau M Sigma_n, A(n)^T A(n) and E[A(n)^T A(n)] = A^T
     * A + I_n Sigma_n: bcp.c's sweep, the R x R steps on the device.
     * *done = 0 (and nothing done): not this sweep (the sums through the
     * host, a rank it does not take, or turned off); the host's sweep
     * then.  NULL: never. */
    fd_status (*sweep_modes)(void *state, const bcp_comm *comm, bcp_sweep_io *io, int *done);
    /* Column r of A(n) times s[n R + r], for every mode. */
    fd_status (*scale)(void *state, const double *s);
    /* Only the columns keep[0 .. K) (increasing), packed at rank K. */
    fd_status (*keep)(void *state, const uint32_t *keep, uint32_t K);
    /* The SVD start's Gram of mode n (I x I, host, row-major; only one
     * triangle is read) of the block, which holds mode n whole; *done = 0:
     * not here, the host computes it (NULL: the host always). */
    fd_status (*mode_gram)(void *state, uint32_t n, double *G, int *done);
    /* The fit with missing entries (bcp_masked.h), which has a state of
     * its own over the whole tensor: its sums on this backend's device;
     * NULL: on the host's threads. */
    const bcp_masked_dev *masked;
};

extern const struct bcp_ops bcp_cpu_ops;
#if defined(FD_HAVE_CUDA) && FD_HAVE_CUDA
extern const struct bcp_ops bcp_cuda_ops;
#endif

fd_status bcp_backend_get(const char *name, const struct bcp_ops **ops);

#endif
