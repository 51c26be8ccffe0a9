/* SPDX-License-Identifier: BSD-3-Clause */
/* Without NCCL (see nccl_comm.h): no communicator, so the callers gather
 * with MPI. */
#include "nccl_comm.h"

fd_status fd_nccl_open(fd_nccl **out, const fd_mpi *mpi)
{
    (void)mpi;
    *out = NULL;
    return FD_OK;
}

void fd_nccl_close(fd_nccl **c) { *c = NULL; }

fd_status fd_nccl_allgatherv(fd_nccl *c, void *buf, const uint64_t *off, size_t elem, void *stream)
{
    (void)c, (void)buf, (void)off, (void)elem, (void)stream;
    return fd_fail(FD_ERR_INTERNAL, "fd_nccl_allgatherv: NCCL is not built");
}

fd_status fd_nccl_allreduce(fd_nccl *c, double *buf, uint64_t count, void *stream)
{
    (void)c, (void)buf, (void)count, (void)stream;
    return fd_fail(FD_ERR_INTERNAL, "fd_nccl_allreduce: NCCL is not built");
}
