/* SPDX-License-Identifier: BSD-3-Clause */
/* Kendall's tau-b on the GPU for rows of more than 16 observations: sign
 * vectors of n (n - 1) / 2 > 128 values, wider than the int8 tensor-core
 * kernel's rows (spearman_gpu.cu).  S = concordant - discordant pairs is
 * the dot product of two rows' sign vectors (kendall.h), summed here four
 * signs at a time by __dp4a over rows of any width (in steps of 64 bytes
 * through shared memory), exact in int32.  Each pair's epilogue is the
 * int8 kernel's: counted where both rows vary, binned into the rho
 * histogram, screened by spearman_decide, and the pairs the host must see
 * (the undecided, and the kept when written) come back as
 * spearman_gpu_pair for spearman_acc_take: the CPU backend's pairs, bit
 * for bit (tests/gpu_spearman.py).
 *
 * Modes 'r', 'a', --top-k's screen, and Kendall's p (after
 * spearman_gpu_wide_kendall: each pair's p needs both rows' ties), which
 * serves Kendall at any width: --pvalue (mode 'p'), and --fdr (mode 'p'
 * with the bins of p in its pass 1, mode 'x' for a range of p after). */
#ifndef FD_SPEARMAN_GPU_WIDE_H
#define FD_SPEARMAN_GPU_WIDE_H

#include "../common/status.h"
#include "kendall.h"
#include "spearman_gpu.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sign vectors up to this many bytes a row (n_obs <= 128). */
#define SPEARMAN_GPU_WIDE_MAX_N 8128

typedef struct spearman_gpu_wide spearman_gpu_wide;

/* kp: bytes a row, a multiple of 64 (zero past n).  y NULL: pairs within
 * x.  The rows are copied; the caller may free them on return.  records:
 * the pair buffer's first size (it grows; FD_GPU_RECORDS). */
fd_status spearman_gpu_wide_create(spearman_gpu_wide **out, int device, uint32_t kp, const spearman_gpu_mat *x,
                                   const spearman_gpu_mat *y, uint64_t records);
void spearman_gpu_wide_destroy(spearman_gpu_wide **w);

/* As spearman_gpu_rect, for sel->mode 'r' or 'a' without xbins, or 'p'
 * (with xbins: bins of p) and 'x' (a range of p) for Kendall after
 * spearman_gpu_wide_kendall; or mode
 * 'k' (--top-k, no histogram, no triangle) with row_thr[i - i0] the |tau|
 * of row i's weakest kept partner (0 while it has fewer than k, as
 * spearman_topk's thr): the pairs that may enter the host's heaps come
 * back, undecided. */
fd_status spearman_gpu_wide_rect(spearman_gpu_wide *w, uint64_t i0, uint64_t i1, uint64_t j0, uint64_t j1, int upper,
                                 const spearman_gpu_sel *sel, const float *row_thr, spearman_gpu_out *out);

/* Kendall's p (modes 'p' and 'x' of spearman_gpu_wide_rect), once: rows
 * of n_obs observations; z2, z_alpha^2 of the run's kendall_ptab; for a =
 * 0 .. n_obs (n_obs - 1) / 2, untied_keep[a], kendall_p_le's verdict for
 * |S| = a between two rows without ties, and untied_p[a], their
 * kendall_p_tab; each row's ties (yties: of y, NULL for pairs within x).
 * Copied; the caller may free them on return. */
typedef struct spearman_gpu_kendall {
    uint32_t n_obs;
    double z2;
    const unsigned char *untied_keep;
    const double *untied_p;
    const kendall_ties *xties, *yties;
} spearman_gpu_kendall;
fd_status spearman_gpu_wide_kendall(spearman_gpu_wide *w, const spearman_gpu_kendall *k);

/* Seconds from the launches to their results on the host, and launches. */
void spearman_gpu_wide_stats(const spearman_gpu_wide *w, double *seconds, uint64_t *launches);

#ifdef __cplusplus
}
#endif

#endif
