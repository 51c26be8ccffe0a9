#include "fdmpi.h"

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
    if (!fd_mpi_active()) return local;
    MPI_CHECK_GOTO(MPI_Comm_rank(MPI_COMM_WORLD, &rank), st, done);
    MPI_CHECK_GOTO(MPI_Comm_size(MPI_COMM_WORLD, &size), st, done);
    /* Encode (failing rank, status) so that MIN picks the lowest failing rank. */
    long mine = local == FD_OK ? (long)size * 64 : (long)rank * 64 + (long)local, all;
    MPI_CHECK_GOTO(MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD), st, done);
    if (all == (long)size * 64) return FD_OK;
    if (failed_rank) *failed_rank = (int)(all / 64);
    return (fd_status)(all % 64);
done:
    return st;
}
