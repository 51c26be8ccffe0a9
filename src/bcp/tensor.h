/* SPDX-License-Identifier: BSD-3-Clause */
/* A dense N-way tensor in memory, as bcp reads it: doubles in C order
 * (the last index fastest), from a NumPy .npy (float32 or float64) or an
 * HDF5 dataset named FILE.h5:/dataset (any floating type).  Bad input is
 * FD_ERR_INPUT naming the file: fewer than 3 modes, an empty mode, a NaN
 * or infinite value (with its index), another element type. */
#ifndef FD_BCP_TENSOR_H
#define FD_BCP_TENSOR_H

#include "../common/status.h"

#include <stdint.h>

#define BCP_MAX_ORDER 8

/* A block of a tensor: the whole one, or a rank's part of it (dims from
 * lo in every mode, of a tensor of full dims). */
typedef struct bcp_tensor {
    uint32_t order;
    uint64_t dims[BCP_MAX_ORDER];
    uint64_t size;            /* the product of dims */
    uint64_t lo[BCP_MAX_ORDER], full[BCP_MAX_ORDER];
    uint64_t full_size;
    double *x;
    /* Missing entries (--missing, --mask): observed[i] is 0 where x[i]
     * is not observed (x[i] is then 0); NULL when every entry is. */
    uint8_t *observed;
    uint64_t n_observed;
    char sha256[65];          /* of the file read, once bcp_tensor_hash has returned */
    struct sha256_job *hashing; /* the hash, still running beside the fit; NULL when done or none */
    char *source;             /* the spec it was read from */
} bcp_tensor;

/* The product of dims[a .. b) of t (its block's): the rows of a
 * Khatri-Rao product of those modes, and of a slice of the unfolding. */
uint64_t bcp_span(const bcp_tensor *t, uint32_t a, uint32_t b);

/* Where the MTTKRP's dimension tree splits the modes: [0, h) and [h, N)
 * with the products of the two halves' (full) lengths as close as can be,
 * so that both contractions of the block are well-shaped products. */
uint32_t bcp_tree_split(const bcp_tensor *t);
/* The side whose intermediate a sweep contracts just before mode n's
 * update, once the other side's factors are final for the sweep: 0
 * before mode 0, 1 before mode h (bcp_tree_split), -1 before the others.
 * The one order of every sweep, on the host (bcp.c) or queued whole on a
 * device (bcp_cuda.c). */
int bcp_sweep_contract_side(const bcp_tensor *t, uint32_t n);

/* Block k (C order) of a grid of grid[n] blocks along mode n: an even
 * share of each mode, [lo, lo + cnt). */
void bcp_grid_block(uint64_t k, uint32_t order, const uint64_t *dims, const uint64_t *grid, uint64_t *lo, uint64_t *cnt);

/* The shape only (the header of a .npy, the dataspace of a dataset). */
fd_status bcp_tensor_shape(const char *spec, uint32_t *order, uint64_t *dims);
/* The block [lo, lo + cnt) of every mode (lo, cnt NULL: the whole
 * tensor); hash: the file's SHA-256 into sha256 (it reads the whole file,
 * which --fuse's sub-tensors must not do each time; "" without); threads:
 * to read a block that is one run of the file (split along the first mode
 * at most) and to check the values on. */
fd_status bcp_tensor_read(bcp_tensor **out, const char *spec, const uint64_t *lo, const uint64_t *cnt, int hash,
                          int threads);
/* The tensor, or its block [lo, lo + cnt) as bcp_tensor_read, with
 * missing entries: NaN in it is missing (an infinity is still refused),
 * and with mask_spec (NULL: none) so is every entry where that array, of
 * the same shape (a .npy of float32/64, uint8 or bool, or an HDF5 dataset
 * of any numeric type), is 0.  t->observed stays NULL when nothing is
 * missing; everything missing is an error (naming the block). */
fd_status bcp_tensor_read_missing(bcp_tensor **out, const char *spec, const char *mask_spec, const uint64_t *lo,
                                  const uint64_t *cnt, int hash, int threads);
/* The read's SHA-256 into t->sha256: the hash runs on a thread of its own
 * from the read on (one stream: about 2 GB/s with SHA-NI, slower than the
 * threaded read), so that a run that needs it only for its result file
 * waits here, after the fit.  FD_OK at once without a hash or when done. */
fd_status bcp_tensor_hash(bcp_tensor *t);
/* An empty tensor of these dims (x zeroed), for tests and gen. */
fd_status bcp_tensor_create(bcp_tensor **out, uint32_t order, const uint64_t *dims);
void bcp_tensor_destroy(bcp_tensor **t);

#endif

/* A tensor of the given dims and CP rank with Gaussian factors (entries
 * N(0, 1), seeded) plus Gaussian noise at snr_db decibels (the signal's
 * mean square over the noise's); *factors: the true A(n), I_n x rank each,
 * row-major, one after the other (caller frees). */
fd_status bcp_tensor_synth(bcp_tensor **out, double **factors, uint32_t order, const uint64_t *dims, uint32_t rank,
                           double snr_db, uint64_t seed);
