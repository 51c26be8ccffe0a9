/* SPDX-License-Identifier: BSD-3-Clause */
#include "placement.h"

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fd_place_threads(const fd_mpi *m)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online < 1) online = 1;
    cpu_set_t set;
    int bound = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0) bound = CPU_COUNT(&set);
    if (bound > 0 && bound < online) return bound;
    long per = online / (m->local_size > 0 ? m->local_size : 1);
    return per < 1 ? 1 : (int)per;
}

/* FNV-1a: the visible-device lists of a node's ranks are compared by hash. */
static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* 1 when CUDA_VISIBLE_DEVICES is set on every rank of the node and differs
 * between all of them. */
static fd_status distinct_visible(int *distinct)
{
    fd_status st = FD_OK;
    MPI_Comm node = MPI_COMM_NULL;
    uint64_t *all = NULL;
    int nsize = 1, rank = 0;
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    uint64_t mine = vis && *vis ? hash_str(vis) : 0;
    *distinct = 0;
    if (!fd_mpi_active()) return FD_OK;
    MPI_CHECK_GOTO(MPI_Comm_rank(MPI_COMM_WORLD, &rank), st, done);
    MPI_CHECK_GOTO(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node), st, done);
    MPI_CHECK_GOTO(MPI_Comm_size(node, &nsize), st, done);
    FD_ALLOC_GOTO(all, (size_t)nsize, st, done);
    MPI_CHECK_GOTO(MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, node), st, done);
    int ok = nsize > 1;
    for (int i = 0; ok && i < nsize; i++) {
        if (all[i] == 0) ok = 0;
        for (int j = 0; ok && j < i; j++)
            if (all[i] == all[j]) ok = 0;
    }
    *distinct = ok;
done:
    free(all);
    if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
    return st;
}

/* The choice both callers make: device 0 when the node's ranks each see
 * their own devices, else the local rank's (*shared: the node's ranks see
 * the same devices, so there must be one per rank). */
static fd_status choose_device(const fd_mpi *m, int *device, int *shared)
{
    int distinct = 0;
    FD_TRY(distinct_visible(&distinct));
    *device = distinct ? 0 : m->local_rank;
    *shared = !distinct;
    return FD_OK;
}

fd_status fd_place_device_index(const fd_mpi *m, int *device)
{
    int shared;
    return choose_device(m, device, &shared);
}

fd_status fd_place_device(const fd_mpi *m, int n_devices, int *device)
{
    int shared = 0;
    FD_TRY(choose_device(m, device, &shared));
    char host[256] = "this node";
    gethostname(host, sizeof host - 1);
    if (n_devices <= 0) return fd_fail(FD_ERR_UNAVAILABLE, "rank %d on %s: no GPU is visible", m->rank, host);
    if (shared && m->local_size > n_devices)
        return fd_fail(FD_ERR_UNAVAILABLE,
                       "%s runs %d ranks but has %d GPU%s: start at most %d rank%s per node (one per GPU), "
                       "or give each task its own GPU (srun --gpus-per-task=1)",
                       host, m->local_size, n_devices, n_devices == 1 ? "" : "s", n_devices, n_devices == 1 ? "" : "s");
    return FD_OK;
}
