/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI plumbing shared by every workload: checked calls, where this rank
 * sits on its node, and agreeing on success across ranks.  MPI_Init and
 * MPI_Finalize live in main.c only. */
#ifndef FD_MPI_H
#define FD_MPI_H

#include "../common/status.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define MPI_CHECK_GOTO(call, st, label)                                       \
    do {                                                                      \
        int mpi_rc_ = (call);                                                 \
        if (mpi_rc_ != MPI_SUCCESS) {                                         \
            char mpi_msg_[MPI_MAX_ERROR_STRING];                              \
            int mpi_len_ = 0;                                                 \
            MPI_Error_string(mpi_rc_, mpi_msg_, &mpi_len_);                   \
            (st) = fd_fail_at(FD_ERR_MPI, __FILE__, __LINE__, "%s: %s",       \
                              #call, mpi_msg_);                               \
            goto label;                                                       \
        }                                                                     \
    } while (0)

typedef struct fd_mpi {
    int rank, size;              /* in MPI_COMM_WORLD */
    int local_rank, local_size;  /* among the ranks of this node */
} fd_mpi;

/* 1 when MPI is initialised and not finalised.  Without a launcher main()
 * does not initialise MPI, and the functions below act as one rank. */
int fd_mpi_active(void);

/* Fills m (one rank of one when MPI is not active).  The node-local rank comes from an
 * MPI shared-memory split, which works under mpirun, srun and singletons. */
fd_status fd_mpi_query(fd_mpi *m);

/* Every rank calls this with its local status (FD_ERR_INTERRUPTED when
 * it is FD_OK but a signal asked this rank to stop: common/interrupt.h).
 * Returns FD_OK everywhere when all succeeded; otherwise the status of the lowest failing rank, and
 * *failed_rank names it; with several ranks, every rank's error message
 * becomes that rank's, prefixed "rank R of P: ".  Collective. */
fd_status fd_mpi_agree(fd_status local, int *failed_rank);

/* out[i] = sum of in[i] over the ranks below this one (0 on rank 0).
 * Collective; out = 0 without MPI. */
fd_status fd_mpi_exscan_u64(const uint64_t *in, uint64_t *out, int n);
/* *v = the bitwise or of every rank's *v.  Collective; nothing to do
 * without MPI. */
fd_status fd_mpi_or_u64(uint64_t *v);
/* all (size x n) gets every rank's n values, in rank order.  Collective;
 * a copy without MPI. */
fd_status fd_mpi_allgather_u64(const uint64_t *mine, int n, uint64_t *all);
/* v holds every rank's share once this returns: rank r's are the elements
 * [off[r], off[r + 1]) of type (in place; off has size + 1 entries).
 * Shares of any size: past MPI's int counts it broadcasts each rank's
 * share in pieces.  Collective; nothing to do without MPI. */
fd_status fd_mpi_allgather_shares(void *v, MPI_Datatype type, const uint64_t *off);

/* All-to-all of uint64 values: send holds counts[r] values for rank r, rank
 * after rank; *recv (malloc'ed, *nrecv values) what every rank sent this
 * one, in rank order.  Counts and offsets must fit MPI's int (said when
 * not).  Collective; a copy without MPI. */
fd_status fd_mpi_exchange_u64(const uint64_t *send, const uint64_t *counts, uint64_t **recv, uint64_t *nrecv);

/* Rank 0 receives every rank's `bytes` bytes, in rank order, into all
 * (size * bytes; ignored elsewhere).  Collective; for plain structs of a
 * homogeneous job. */
fd_status fd_mpi_gather_bytes(const void *mine, size_t bytes, void *all);

/* Every rank read the same input: compares this rank's SHA-256 (hex) with
 * rank 0's; FD_ERR_INPUT naming `what` where it differs, on every rank
 * (fd_mpi_agree: the differing rank's message).  Collective. */
fd_status fd_mpi_same_hash(const char *sha256_hex, const char *what);
/* The same for a digest of what was read rather than of the file
 * (spearman's ranks, smat_digest): the message says so. */
fd_status fd_mpi_same_digest(const char *hex, const char *what);

/* 1 once fd_mpi_agree() has put a failure known to every rank into the
 * error message ("rank R of P: ..."): main() then prints it on rank 0
 * only, instead of once per rank. */
int fd_mpi_error_relayed(void);

#endif
