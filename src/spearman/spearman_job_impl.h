/* Inside a spearman run: the state every stage shares (spearman_job.c)
 * and the FDR cutoff (spearman_fdr.c), which runs extra passes. */
#ifndef FD_SPEARMAN_JOB_IMPL_H
#define FD_SPEARMAN_JOB_IMPL_H

#include "../common/progress.h"
#include "../io/h5part.h"
#include "rankmat.h"
#include "spearman_backend.h"
#include "spearman_h5.h"
#include "spearman_job.h"
#include "tile.h"

#include <pthread.h>
#include <stdatomic.h>

/* Rows per tile side: 256 rows of 30 observations are 8 KB of packed
 * ranks, so a tile's two blocks stay in L1/L2 while 65,536 pairs are
 * computed from them. */
#define BLOCK 256
/* Pairs a thread buffers before writing them out. */
#define FLUSH_PAIRS (1u << 16)
/* Selected pairs a rank keeps in memory during the counting pass (24
 * bytes each), so that a selective threshold needs no second pass: 16 Mi
 * pairs, 384 MiB (FD_SPEARMAN_KEEP_PAIRS sets it; 0 turns it off). */
#define KEEP_PAIRS (1u << 24)
/* Bins of the FDR histogram of x = 1 - rho^2 over [0, x_crit(Q)]. */
#define FDR_BINS (1u << 16)

typedef struct {
    const spearman_opts *o;
    const struct spearman_ops *ops;
    void *dev;                    /* the backend's state (GPU: the resident rank matrix) */
    int device;                   /* the rank's GPU, for GPU backends */
    fd_mpi mpi;
    spearman_mat *x, *y;          /* y == x for the triangle */
    spearman_sel sel;
    int threads;
    h5part_set out;
    spearman_h5 *h5;
    pthread_mutex_t lock;         /* serialises h5 appends */
    spearman_acc *acc;            /* one per thread */
    uint64_t **hbuf, **xbuf;      /* per thread: histogram, FDR histogram */
    spair **obuf;                 /* per thread: selected pairs */
    size_t *obufcap;
    /* Pass 1 keeps the selected pairs (obuf, nkept per thread) while the
     * rank holds at most keep_pairs of them; kept_over: it went past that
     * on some thread, and pass 2 writes them instead. */
    uint64_t keep_pairs;
    size_t *nkept;
    atomic_int kept_over;
    double xscale;
    spearman_topk *topk;          /* per thread, --top-k */
    double *busy;                 /* one per thread */
    uint64_t *records;            /* one per thread */
    fd_progress prog;
    atomic_int failed;
    uint64_t hist[SPEARMAN_HIST_BINS], pairs, selected;
    /* --fdr: selected pairs (p <= Q) by x in pass 1, and the exact x values
     * of the bins where the Benjamini-Hochberg cutoff lies. */
    uint64_t *xhist;
    int collect;
    int bin_lo, bin_hi;
    double *xs;
    size_t nxs, capxs;
    double t0, load_s, pass1_s, pass2_s;
} job;

/* One pass over all tiles: emit = 0 counts and fills the histograms (and
 * keeps the selected pairs when jb->keep_pairs), emit = 1 writes the
 * selected pairs (or, with jb->collect, keeps their x). */
fd_status spearman_pass(job *jb, int emit);

/* --fdr: the exact Benjamini-Hochberg cutoff after pass 1 (spearman_fdr.c). */
fd_status spearman_fdr_cutoff(job *jb);


#endif
