/* SPDX-License-Identifier: BSD-3-Clause */
#include "fdmpi.h"

#include "../common/interrupt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int relayed;

int fd_mpi_active(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    return init && !fin;
}

fd_status fd_mpi_query(fd_mpi *m)
{
    fd_status st = FD_OK;
    MPI_Comm node = MPI_COMM_NULL;
    if (!fd_mpi_active()) {
        *m = (fd_mpi){0, 1, 0, 1};
        return FD_OK;
    }
    MPI_CHECK_GOTO(MPI_Comm_rank(MPI_COMM_WORLD, &m->rank), st, done);
    MPI_CHECK_GOTO(MPI_Comm_size(MPI_COMM_WORLD, &m->size), st, done);
    MPI_CHECK_GOTO(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &node), st, done);
    MPI_CHECK_GOTO(MPI_Comm_rank(node, &m->local_rank), st, done);
    MPI_CHECK_GOTO(MPI_Comm_size(node, &m->local_size), st, done);
done:
    if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
    return st;
}

fd_status fd_mpi_agree(fd_status local, int *failed_rank)
{
    fd_status st = FD_OK;
    int rank, size;
    /* A stage boundary is where a signal to stop takes effect: every rank
     * learns of it here, and none goes on into the next stage. */
    if (local == FD_OK) local = fd_interrupt_check();
    if (!fd_mpi_active()) return local;
    MPI_CHECK_GOTO(MPI_Comm_rank(MPI_COMM_WORLD, &rank), st, done);
    MPI_CHECK_GOTO(MPI_Comm_size(MPI_COMM_WORLD, &size), st, done);
    /* Encode (failing rank, status) so that MIN picks the lowest failing rank. */
    long mine = local == FD_OK ? (long)size * 64 : (long)rank * 64 + (long)local, all;
    MPI_CHECK_GOTO(MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD), st, done);
    if (all == (long)size * 64) return FD_OK;
    int who = (int)(all / 64);
    fd_status agreed = (fd_status)(all % 64);
    if (failed_rank) *failed_rank = who;
    if (size == 1) return agreed;
    /* Every rank learns the failing rank's message, so that rank 0 can
     * print it once for the whole job. */
    char msg[1024];
    /* The first byte says whether the message was relayed before: it then
     * names its rank already. */
    snprintf(msg, sizeof msg, "%c%s", relayed ? 'R' : 'L', fd_errmsg());
    MPI_CHECK_GOTO(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, who, MPI_COMM_WORLD), st, done);
    msg[sizeof msg - 1] = 0;
    fd_errclear();
    if (msg[0] == 'R') fd_fail(agreed, "%s", msg + 1);
    else fd_fail(agreed, "rank %d of %d: %s", who, size, msg[1] ? msg + 1 : fd_status_name(agreed));
    relayed = 1;
    return agreed;
done:
    return st;
}

int fd_mpi_error_relayed(void) { return relayed; }

fd_status fd_mpi_exscan_u64(const uint64_t *in, uint64_t *out, int n)
{
    fd_status st = FD_OK;
    int rank = 0;
    for (int i = 0; i < n; i++) out[i] = 0;
    if (!fd_mpi_active()) return FD_OK;
    MPI_CHECK_GOTO(MPI_Comm_rank(MPI_COMM_WORLD, &rank), st, done);
    MPI_CHECK_GOTO(MPI_Exscan(in, out, n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD), st, done);
    /* MPI leaves rank 0's result undefined. */
    if (rank == 0)
        for (int i = 0; i < n; i++) out[i] = 0;
done:
    return st;
}

fd_status fd_mpi_or_u64(uint64_t *v)
{
    fd_status st = FD_OK;
    if (!fd_mpi_active()) return FD_OK;
    MPI_CHECK_GOTO(MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_UINT64_T, MPI_BOR, MPI_COMM_WORLD), st, done);
done:
    return st;
}

fd_status fd_mpi_allgather_u64(const uint64_t *mine, int n, uint64_t *all)
{
    fd_status st = FD_OK;
    if (!fd_mpi_active()) {
        memcpy(all, mine, (size_t)n * sizeof *all);
        return FD_OK;
    }
    MPI_CHECK_GOTO(MPI_Allgather(mine, n, MPI_UINT64_T, all, n, MPI_UINT64_T, MPI_COMM_WORLD), st, done);
done:
    return st;
}

/* Elements per broadcast past int counts: 2^30, whatever their size. */
#define SHARE_PIECE ((uint64_t)1 << 30)

fd_status fd_mpi_allgather_shares(void *v, MPI_Datatype type, const uint64_t *off)
{
    fd_status st = FD_OK;
    int size = 1, esize = 0, *cnt = NULL, *dsp = NULL;
    if (!fd_mpi_active()) return FD_OK;
    MPI_CHECK_GOTO(MPI_Comm_size(MPI_COMM_WORLD, &size), st, done);
    MPI_CHECK_GOTO(MPI_Type_size(type, &esize), st, done);
    if (size == 1) return FD_OK;
    if (off[size] <= INT32_MAX) {
        if (!(cnt = malloc((size_t)size * sizeof *cnt)) || !(dsp = malloc((size_t)size * sizeof *dsp))) {
            st = fd_fail(FD_ERR_NOMEM, "out of memory");
            goto done;
        }
        for (int r = 0; r < size; r++) {
            cnt[r] = (int)(off[r + 1] - off[r]);
            dsp[r] = (int)off[r];
        }
        MPI_CHECK_GOTO(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, cnt, dsp, type, MPI_COMM_WORLD), st,
                       done);
        goto done;
    }
    for (int r = 0; r < size; r++)
        for (uint64_t a = off[r]; a < off[r + 1]; a += SHARE_PIECE) {
            const uint64_t k = off[r + 1] - a < SHARE_PIECE ? off[r + 1] - a : SHARE_PIECE;
            MPI_CHECK_GOTO(MPI_Bcast((char *)v + a * (uint64_t)esize, (int)k, type, r, MPI_COMM_WORLD), st, done);
        }
done:
    free(cnt);
    free(dsp);
    return st;
}

fd_status fd_mpi_exchange_u64(const uint64_t *send, const uint64_t *counts, uint64_t **recv, uint64_t *nrecv)
{
    fd_status st = FD_OK;
    int size = 1;
    uint64_t *rc = NULL, total = 0, sent = 0;
    int *sc = NULL, *sd = NULL, *rci = NULL, *rd = NULL;
    *recv = NULL;
    *nrecv = 0;
    if (fd_mpi_active()) MPI_CHECK_GOTO(MPI_Comm_size(MPI_COMM_WORLD, &size), st, done);
    if (!fd_mpi_active() || size == 1) {
        if (!(*recv = malloc((counts[0] + 1) * sizeof **recv))) return fd_fail(FD_ERR_NOMEM, "out of memory");
        memcpy(*recv, send, counts[0] * sizeof **recv);
        *nrecv = counts[0];
        return FD_OK;
    }
    if (!(rc = malloc((size_t)size * sizeof *rc)) || !(sc = malloc((size_t)size * sizeof *sc)) ||
        !(sd = malloc((size_t)size * sizeof *sd)) || !(rci = malloc((size_t)size * sizeof *rci)) ||
        !(rd = malloc((size_t)size * sizeof *rd))) {
        st = fd_fail(FD_ERR_NOMEM, "out of memory");
        goto done;
    }
    MPI_CHECK_GOTO(MPI_Alltoall(counts, 1, MPI_UINT64_T, rc, 1, MPI_UINT64_T, MPI_COMM_WORLD), st, done);
    for (int r = 0; r < size; r++) {
        sc[r] = (int)counts[r];
        sd[r] = (int)sent;
        rci[r] = (int)rc[r];
        rd[r] = (int)total;
        sent += counts[r];
        total += rc[r];
        /* Every rank sees its own sums only: a rank whose sums overflow
         * says so, and the others wait in the collective below. */
        if (counts[r] > INT32_MAX || rc[r] > INT32_MAX || sent > INT32_MAX || total > INT32_MAX) {
            st = fd_fail(FD_ERR_INTERNAL, "fd_mpi_exchange_u64: more than 2^31 values to exchange at once");
            break;
        }
    }
    if (st == FD_OK && !(*recv = malloc((total + 1) * sizeof **recv))) st = fd_fail(FD_ERR_NOMEM, "out of memory");
    /* Agreed before the exchange, so that no rank enters it alone. */
    if ((st = fd_mpi_agree(st, NULL)) != FD_OK) goto done;
    MPI_CHECK_GOTO(MPI_Alltoallv(send, sc, sd, MPI_UINT64_T, *recv, rci, rd, MPI_UINT64_T, MPI_COMM_WORLD), st, done);
    *nrecv = total;
done:
    if (st != FD_OK) {
        free(*recv);
        *recv = NULL;
        *nrecv = 0;
    }
    free(rc);
    free(sc);
    free(sd);
    free(rci);
    free(rd);
    return st;
}

fd_status fd_mpi_gather_bytes(const void *mine, size_t bytes, void *all)
{
    fd_status st = FD_OK;
    if (!fd_mpi_active()) {
        memcpy(all, mine, bytes);
        return FD_OK;
    }
    if (bytes > INT32_MAX) return fd_fail(FD_ERR_INTERNAL, "fd_mpi_gather_bytes: %zu bytes is too many", bytes);
    MPI_CHECK_GOTO(MPI_Gather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD), st, done);
done:
    return st;
}

/* 1 where this rank's 64 hex digits are rank 0's (which go into theirs). */
static fd_status same_as_rank0(const char *hex, char theirs[65], int *same)
{
    fd_status st = FD_OK;
    int size = 1;
    *same = 1;
    if (!fd_mpi_active()) return FD_OK;
    MPI_CHECK_GOTO(MPI_Comm_size(MPI_COMM_WORLD, &size), st, done);
    if (size == 1) return FD_OK;
    snprintf(theirs, 65, "%s", hex);
    MPI_CHECK_GOTO(MPI_Bcast(theirs, 65, MPI_CHAR, 0, MPI_COMM_WORLD), st, done);
    *same = strncmp(theirs, hex, 64) == 0;
done:
    return st;
}

/* The verdict agreed: a rank whose input differs must not return alone
 * while rank 0, whose input is its own reference, goes on into the next
 * collective and waits there for ever. */
static fd_status agreed(fd_status st) { return st == FD_ERR_MPI ? st : fd_mpi_agree(st, NULL); }

fd_status fd_mpi_same_hash(const char *sha256_hex, const char *what)
{
    char sha[65];
    int same = 1;
    fd_status st = same_as_rank0(sha256_hex, sha, &same);
    if (st == FD_OK && !same)
        st = fd_fail(FD_ERR_INPUT, "%s differs from the file rank 0 read (SHA-256 %.16s... against %.16s...)", what,
                     sha256_hex, sha);
    return agreed(st);
}

fd_status fd_mpi_same_digest(const char *hex, const char *what)
{
    char theirs[65];
    int same = 1;
    fd_status st = same_as_rank0(hex, theirs, &same);
    if (st == FD_OK && !same)
        st = fd_fail(FD_ERR_INPUT,
                     "%s: this rank read other values than rank 0 (digest %.16s... against %.16s...): is it the same "
                     "file on every node?",
                     what, hex, theirs);
    return agreed(st);
}
