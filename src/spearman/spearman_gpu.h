/* SPDX-License-Identifier: BSD-3-Clause */
/* All-pairs Spearman on one GPU: the device engine of the CUDA spearman
 * backend.  Plain C interface (no CUDA header leaks through it).
 *
 * The rank matrix lives on the device as int8 rows (a_k = 2 rank_k -
 * (n + 1), exact for n <= 128, zero-padded to kp bytes, a multiple of 32)
 * with S_ii and 1/sqrt(S_ii) per row.  One call computes a
 * rectangle of pairs, S_ij = sum_k a_ik a_jk, on the int8 tensor cores
 * (mma.sync m16n8k32, exact int32 sums) and, in the same kernel while the
 * sums are in registers: counts the pairs both of whose rows vary, fills
 * the rho histogram, and decides the selection (and --fdr's bin of x)
 * where float or double precision decides it beyond doubt; the few pairs
 * near a boundary go back to the host undecided, with S_ij, for the exact
 * test of tile.c.  No tile of the N x N matrix is ever stored. */
#ifndef FD_SPEARMAN_GPU_H
#define FD_SPEARMAN_GPU_H

#include "../common/status.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Rows of a thread block's tile (and of a row tile of mode 'k''s records). */
#define SPEARMAN_GPU_TILE_ROWS 128
/* Observations per row the int8 products hold exactly: |a| <= n - 1 <= 127. */
#define SPEARMAN_GPU_MAX_N 128

/* Column tiles a thread block takes in turn: enough to spread the
 * block's fixed cost (its rows, zeroing and flushing its histogram) over
 * 524,288 pairs (32 took 1% less time than 16 at 2,000,000 rows, 64 more
 * than 32: spearman-gpu-ab.csv). */
#define SPEARMAN_GPU_STRIP 32
/* Pairs the device buffer for the host holds at first (16 MiB); a launch
 * that finds it too small grows it and runs again. */
#define SPEARMAN_GPU_RECORDS (1u << 20)

typedef struct spearman_gpu spearman_gpu;

/* How the kernel's common path screens the pairs: by the band around the
 * threshold (counting certain keeps on the way), by the largest |rho|
 * (nothing counted unless a pair reaches the threshold), or chosen per
 * launch from the last one (docs/performance.md).  Same results. */
enum { SPEARMAN_GPU_SCREEN_AUTO, SPEARMAN_GPU_SCREEN_BAND, SPEARMAN_GPU_SCREEN_MAX };

typedef struct spearman_gpu_tuning {
    uint32_t strip;              /* tiles of 128 columns per thread block: SPEARMAN_GPU_STRIP */
    int screen;                  /* SPEARMAN_GPU_SCREEN_*: AUTO */
    uint64_t records;            /* the pair buffer's first size: SPEARMAN_GPU_RECORDS (it grows) */
} spearman_gpu_tuning;

typedef struct spearman_gpu_mat {
    uint64_t rows;
    const int8_t *a;             /* rows x kp bytes */
    const int64_t *sii;          /* per row; 0 for a constant row */
    const float *inv_root;
} spearman_gpu_mat;

typedef struct spearman_gpu_sel {
    int mode;                    /* 'p', 'r', 'a' or 'x', as spearman_sel; or 'k' (row_pre) */
    double q, x_lo, x_hi;        /* as spearman_sel */
    float pre;                   /* the float prefilter, as spearman_sel */
    int hist;                    /* fill the rho histogram */
    int emit;                    /* pairs kept for certain come back too (they are written) */
    /* --fdr's pass 1: bin each kept pair's x = 1 - rho^2 (out->xhist:
     * xbins bins, spearman_xbin with xscale); a pair whose bin the device
     * cannot tell for certain comes back undecided.  0: no bins. */
    uint32_t xbins;
    double xscale;
    uint64_t emit_cap;           /* 0, or emit only while at most this many pairs come back (see emit_dropped) */
    /* Mode 'k' (--top-k) takes no selection: the rows of the launch are
     * those of the last spearman_gpu_topk_reset, each screened by its
     * list's weakest entry, and what passes is merged into the lists on
     * the device.  No histogram, no upper triangle: i == j counts in
     * pairs (and is never listed where x is y). */
} spearman_gpu_sel;

typedef struct spearman_gpu_pair {
    uint32_t i, j;               /* rows of x and y */
    int32_t s;                   /* S_ij */
    union {
        uint32_t keep;           /* 1: kept for certain (counted in selected); 0: the host decides */
        uint32_t sjj;            /* mode 'k': S_jj (below 2^21 for n <= 128), for the lists */
    };
} spearman_gpu_pair;

typedef struct spearman_gpu_out {
    uint64_t pairs;              /* pairs both of whose rows vary */
    uint64_t selected;           /* of which kept for certain */
    const unsigned long long *hist; /* SPEARMAN_HIST_BINS counts (spearman_hist.h), or NULL (none asked, or no rows) */
    const unsigned long long *xhist; /* sel->xbins counts of the pairs in selected, or NULL (none asked, or none) */
    spearman_gpu_pair *rec;      /* pinned, owned by the engine; both valid until the next call */
    int emit_dropped;            /* over emit_cap: the launch ran again without emitting (only undecided
                                    pairs came back; the counts are whole) */
    uint64_t nrec;               /* mode 'k': the pairs that passed the screens (merged on the device, rec unused) */
} spearman_gpu_out;

/* An entry of a row's --top-k list: partner j, S_ij, S_jj. */
typedef struct spearman_gpu_topk_ent {
    uint32_t j;
    int32_t s;
    uint32_t sjj;
} spearman_gpu_topk_ent;

typedef struct spearman_gpu_stats {
    uint64_t launches, reruns;   /* reruns: a launch repeated after the pair buffer grew */
    double kernel_seconds;       /* launches to their results on the host */
    uint64_t launches_max;       /* of which with the max screen */
    uint64_t closer;             /* half warp tiles (16 x 64 pairs) that took the closer look */
    uint32_t strip;              /* column tiles per thread block */
    uint64_t launches_fdr;       /* of which --fdr's pass 1 (bins x) */
    uint32_t strip_fdr;          /* column tiles per thread block there (longer: spearman_gpu.cu, XSTRIP) */
    double setup_seconds;        /* spearman_gpu_create: the kernels' shared-memory attributes, stream, buffers */
    double upload_seconds;       /* of which the rank matrices to the device */
} spearman_gpu_stats;

/* x and, for two inputs, y (NULL: pairs within x).  kp: bytes per row,
 * a multiple of 32 up to 128.  The matrices are copied; the caller may
 * free them on return. */
fd_status spearman_gpu_create(spearman_gpu **out, int device, uint32_t kp, const spearman_gpu_tuning *tu,
                              const spearman_gpu_mat *x, const spearman_gpu_mat *y);
void spearman_gpu_destroy(spearman_gpu **g);

/* Rows [i0, i1) of x against rows [j0, j1) of y; upper: pairs within x,
 * only j > i. */
fd_status spearman_gpu_rect(spearman_gpu *g, uint64_t i0, uint64_t i1, uint64_t j0, uint64_t j1, int upper,
                            const spearman_gpu_sel *sel, spearman_gpu_out *out);

void spearman_gpu_get_stats(const spearman_gpu *g, spearman_gpu_stats *s);

/* The resident rows of x (y = 0) or of y (y = 1; x's for pairs within
 * x), with the device and stream they live on: for the engine of the
 * pairs with missing values (spearman_gpu_missing.h), which launches on
 * the same stream. */
typedef struct spearman_gpu_rows {
    const int8_t *a;             /* rows x kp bytes, on the device */
    const int64_t *sii;          /* per row, on the device */
    uint64_t rows;
    uint32_t kp;
    int device;
    void *stream;                /* cudaStream_t */
} spearman_gpu_rows;
void spearman_gpu_get_rows(const spearman_gpu *g, int y, spearman_gpu_rows *r);

/* --top-k: empty lists of up to k partners for rows [i0, i0 + rows) of x
 * (same: x is y, so a row is not its own partner), for the mode 'k'
 * launches of those rows that follow.  Each launch screens a row's pairs
 * by |rho| against its list's weakest entry (all of them while the list
 * is short) and merges what passes into the lists: the k strongest
 * partners seen (largest |rho|, then smaller j; tile.c's order), exactly,
 * from the integers. */
fd_status spearman_gpu_topk_reset(spearman_gpu *g, uint64_t i0, uint32_t rows, uint32_t k, int same);
/* The lists, once the rows' launches are done: n[r] entries for row
 * i0 + r at ent[r k ...], in no order.  Pinned, owned by the engine,
 * valid until its next call. */
fd_status spearman_gpu_topk_lists(spearman_gpu *g, const uint32_t **n, const spearman_gpu_topk_ent **ent);

#ifdef __cplusplus
}
#endif

#endif
