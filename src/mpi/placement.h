/* SPDX-License-Identifier: BSD-3-Clause */
/* Where a rank runs: how many worker threads it should use and which GPU
 * it drives.  Lives here, not in the backends, so that every workload
 * places its ranks the same way: one rank per GPU, threads sharing the
 * node's cores.
 *
 * The node-local rank comes from an MPI shared-memory split (see
 * fd_mpi_query), which is right under mpirun, srun and every launcher,
 * unlike OMPI_COMM_WORLD_LOCAL_RANK or SLURM_LOCALID alone. */
#ifndef FD_PLACEMENT_H
#define FD_PLACEMENT_H

#include "fdmpi.h"

/* Default worker threads for this rank: the CPUs the launcher bound it to
 * when it was bound to fewer than the node has, otherwise the node's CPUs
 * divided among the ranks on the node (at least 1). */
int fd_place_threads(const fd_mpi *m);

/* Picks the GPU this rank drives among the n_devices it can see.
 * Collective over MPI_COMM_WORLD when MPI is active.
 *  - every rank on the node sees a different CUDA_VISIBLE_DEVICES (the
 *    launcher gave each task its own GPU, e.g. srun --gpus-per-task=1):
 *    device 0;
 *  - otherwise device = node-local rank, which needs local_size <= n_devices;
 *    more ranks than GPUs on a node is FD_ERR_UNAVAILABLE with a message
 *    that names the host and the counts.
 * n_devices = 0 is FD_ERR_UNAVAILABLE on every rank. */
fd_status fd_place_device(const fd_mpi *m, int n_devices, int *device);
/* The GPU fd_place_device picks when the node has GPUs enough, before
 * they are counted (counting starts the driver: 0.1 s).  Collective as
 * fd_place_device. */
fd_status fd_place_device_index(const fd_mpi *m, int *device);

#endif
