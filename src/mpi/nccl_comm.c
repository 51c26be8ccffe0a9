/* SPDX-License-Identifier: BSD-3-Clause */
/* NCCL between the ranks' GPUs (see nccl_comm.h). */
#include "nccl_comm.h"

#include "../common/dynlib.h"
#include "../common/env.h"
#include "../cuda/check.cuh"

#include <nccl.h>
#include <stdlib.h>
#include <string.h>

/* NCCL is loaded when a run of several GPU ranks first needs it
 * (src/common/dynlib.h): linked, it cost every command's start 1.2 MB and
 * 3.7 ms on the dev VM.  Every NCCL call goes through this table. */
#define NCCL_FNS(X) \
    X(ncclAllReduce) \
    X(ncclBroadcast) \
    X(ncclCommDestroy) \
    X(ncclCommInitRank) \
    X(ncclGetErrorString) \
    X(ncclGetUniqueId) \
    X(ncclGroupEnd) \
    X(ncclGroupStart)
#define NCCL_SLOT(f) __typeof__(&f) f;
static struct {
    NCCL_FNS(NCCL_SLOT)
} nc;
#define NCCL_SYM(f) {#f, (void **)&nc.f, 0},
static const fd_dynsym syms[] = {NCCL_FNS(NCCL_SYM){NULL, NULL, 0}};
static fd_dynlib lib = {FD_NCCL_SONAME, FD_NCCL_DIR,
                        "the GPUs' collectives between ranks; FD_NCCL=0 sends them through MPI", FD_ERR_UNAVAILABLE,
                        syms, NULL, FD_DYNLIB_STATE};

#define NCCL_CHECK_GOTO(call, st, label)                                                                               \
    do {                                                                                                               \
        ncclResult_t nccl_rc_ = (call);                                                                                \
        if (nccl_rc_ != ncclSuccess) {                                                                                 \
            (st) = fd_fail_at(FD_ERR_CUDA, __FILE__, __LINE__, "%s: %s", #call, nc.ncclGetErrorString(nccl_rc_));        \
            goto label;                                                                                                \
        }                                                                                                              \
    } while (0)

struct fd_nccl {
    ncclComm_t comm;
    int rank, size;
};

fd_status fd_nccl_open(fd_nccl **out, const fd_mpi *mpi)
{
    fd_status st = FD_OK;
    *out = NULL;
    if (mpi->size < 2 || !fd_mpi_active() || fd_env_switched("FD_NCCL")) return FD_OK;
    fd_nccl *c = calloc(1, sizeof *c);
    void *one = NULL;
    int inited = 0;
    if (!c) return fd_fail(FD_ERR_NOMEM, "out of memory");
    c->rank = mpi->rank;
    c->size = mpi->size;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    /* Every rank loads it; a failure anywhere stops all of them below. */
    st = fd_dynlib_load(&lib);
    if (st == FD_OK && mpi->rank == 0) {
        const ncclResult_t rc = nc.ncclGetUniqueId(&id);
        if (rc != ncclSuccess)
            st = fd_fail_at(FD_ERR_CUDA, __FILE__, __LINE__, "ncclGetUniqueId: %s", nc.ncclGetErrorString(rc));
    }
    /* Rank 0's failure must reach the others before they wait in
     * ncclCommInitRank. */
    st = fd_mpi_agree(st, NULL);
    if (st != FD_OK) goto done;
    MPI_CHECK_GOTO(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD), st, done);
    NCCL_CHECK_GOTO(nc.ncclCommInitRank(&c->comm, mpi->size, id, mpi->rank), st, done);
    inited = 1;
    /* NCCL connects the ranks on the first collective (about 0.15 s on
     * two H200s): one small all-reduce here, so that setting up is paid
     * with the setup and not in the first pass's time. */
    CUDA_CHECK_GOTO(cudaMalloc(&one, sizeof(int)), st, done);
    CUDA_CHECK_GOTO(cudaMemset(one, 0, sizeof(int)), st, done);
    NCCL_CHECK_GOTO(nc.ncclAllReduce(one, one, 1, ncclInt, ncclSum, c->comm, 0), st, done);
    CUDA_CHECK_GOTO(cudaStreamSynchronize(0), st, done);
    *out = c;
    c = NULL;
done:
    if (one) cudaFree(one);
    if (c && inited) nc.ncclCommDestroy(c->comm);
    free(c);
    return st;
}

void fd_nccl_close(fd_nccl **pc)
{
    fd_nccl *c = *pc;
    if (!c) return;
    nc.ncclCommDestroy(c->comm);
    free(c);
    *pc = NULL;
}

fd_status fd_nccl_allgatherv(fd_nccl *c, void *buf, const uint64_t *off, size_t elem, void *stream)
{
    fd_status st = FD_OK;
    cudaStream_t s = (cudaStream_t)stream;
    char *b = buf;
    NCCL_CHECK_GOTO(nc.ncclGroupStart(), st, done);
    for (int r = 0; r < c->size; r++) {
        char *block = b + off[r] * elem;
        const ncclResult_t rc = nc.ncclBroadcast(block, block, (off[r + 1] - off[r]) * elem, ncclChar, r, c->comm, s);
        if (rc != ncclSuccess) {
            nc.ncclGroupEnd();
            st = fd_fail_at(FD_ERR_CUDA, __FILE__, __LINE__, "ncclBroadcast (root %d): %s", r, nc.ncclGetErrorString(rc));
            goto done;
        }
    }
    NCCL_CHECK_GOTO(nc.ncclGroupEnd(), st, done);
    CUDA_CHECK_GOTO(cudaStreamSynchronize(s), st, done);
done:
    return st;
}

fd_status fd_nccl_allreduce(fd_nccl *c, double *buf, uint64_t count, void *stream)
{
    fd_status st = FD_OK;
    NCCL_CHECK_GOTO(nc.ncclAllReduce(buf, buf, count, ncclDouble, ncclSum, c->comm, (cudaStream_t)stream), st, done);
done:
    return st;
}
