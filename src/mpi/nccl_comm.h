/* SPDX-License-Identifier: BSD-3-Clause */
/* NCCL between the GPUs of a job's ranks (one GPU a rank), for the
 * collectives whose data already lives on the devices.  Built where CMake
 * found NCCL (nccl_comm.c); elsewhere nccl_none.c, whose open gives no
 * communicator, and callers fall back to MPI on the host.  Plain C: the
 * stream is passed as void * so that no CUDA header leaks through. */
#ifndef FD_NCCL_COMM_H
#define FD_NCCL_COMM_H

#include "fdmpi.h"

#include <stddef.h>
#include <stdint.h>

typedef struct fd_nccl fd_nccl;

/* A communicator over every rank of MPI_COMM_WORLD on the current CUDA
 * device.  *out = NULL (and FD_OK) where NCCL is not built, with one rank,
 * or when FD_NCCL=off.  Collective: every rank calls it, after the ranks
 * agreed that their devices are open (a rank missing here would leave the
 * others waiting). */
fd_status fd_nccl_open(fd_nccl **out, const fd_mpi *mpi);
void fd_nccl_close(fd_nccl **c);

/* Rank r's block, elements [off[r], off[r + 1]) of the device array buf
 * (elem bytes each), onto every rank, in place: one broadcast per rank in
 * one NCCL group (NCCL's all-gather wants equal blocks).  Waits for the
 * stream. */
fd_status fd_nccl_allgatherv(fd_nccl *c, void *buf, const uint64_t *off, size_t elem, void *stream);

/* Doubles summed over the ranks, in place on every rank (NCCL's
 * all-reduce, which hands every rank the same bits: the sum is formed
 * once and sent on unchanged, NVIDIA/nccl#855; NVLS, whose reductions
 * in the switch are not, stays off: NCCL_NVLS_ENABLE=0).  Queued on the
 * stream; does not wait. */
fd_status fd_nccl_allreduce(fd_nccl *c, double *buf, uint64_t count, void *stream);

#endif
