/* SPDX-License-Identifier: BSD-3-Clause */
/* A spearman run's state and its passes over the pair matrix
 * (spearman_pass.c).  The modules of a run stack one way:
 *
 *   spearman_job.c    the stages (job/job.h): read, setup, run, commit
 *     spearman_ckpt.c   checkpoints: segments, what a resumed run skips;
 *                       it plugs into the passes through their hooks
 *       spearman_fdr.c    --fdr's cutoff: a collecting pass
 *         spearman_pass.c   the passes: records, tiles, pairs
 *
 * Each uses only those below it; the passes call checkpoints only
 * through spearman_pass_hooks. */
#ifndef FD_SPEARMAN_PASS_H
#define FD_SPEARMAN_PASS_H

#include "../common/progress.h"
#include "../job/resultdir.h"
#include "../mpi/taskpool.h"
#include "../job/h5part.h"
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

typedef struct spearman_run spearman_run;

/* What checkpoints do inside a pass (spearman_ckpt.c); NULL: none. */
typedef struct spearman_pass_hooks {
    /* rank 0: this pass's records to hand out, from all of them (the
     * caller frees todo with ckpt_records_free) */
    fd_status (*list)(spearman_run *jb, const fd_records *all, fd_records *todo);
    /* thread t's counters start from zero */
    void (*pass_start)(spearman_run *jb, int t);
    /* thread t finished record id; its results are in a */
    fd_status (*record_done)(spearman_run *jb, int t, spearman_acc *a, uint64_t id);
    /* thread t's buffered pairs (a->out) are to be written */
    fd_status (*flush)(spearman_run *jb, int t, spearman_acc *a);
    /* every thread has stopped: commit what they hold */
    fd_status (*pass_end)(spearman_run *jb);
} spearman_pass_hooks;

struct spearman_run {
    const spearman_opts *o;
    const struct spearman_ops *ops;
    void *dev;                    /* the backend's state (GPU: the resident rank matrix) */
    int device;                   /* the rank's GPU, for GPU backends */
    fd_mpi mpi;                   /* the job's (job/job.h) */
    spearman_mat *x, *y;          /* y == x for the triangle */
    spearman_sel sel;
    spearman_sel *sel_by_n;       /* --missing pairwise: sel.by_n's table, or NULL */
    kendall_ptab ktab;            /* --method kendall: the exact p-values, for the selection and the writing */
    int threads;
    int host_threads;             /* threads a worker may spread its host-side work over (rho and p of the
                                     pairs it writes, --top-k heaps): 1, or the rank's cores for a GPU rank,
                                     whose one worker would otherwise do it alone */
    const resultdir *out;         /* the job's */
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
    double *pedge;                /* --missing pairwise: spearman_acc.pedge */
    int collect;
    int bin_lo, bin_hi;
    double *xs;
    size_t nxs, capxs;
    double fdr_cut[2];            /* the x range of spearman_sel_x that the cutoff chose */
    double t0, load_s, pass1_s, fdr_s, pass2_s; /* fdr_s: --fdr's cutoff (its collecting pass) */
    double t_enum;                /* the passes' start */
    h5part_rank *reps;            /* rank 0: every rank's row of /ranks */
    /* Checkpoints (-o with --checkpoint-seconds > 0): NULL when off. */
    struct spearman_ckpt *ck;
    const spearman_pass_hooks *hooks;
    int stage;                    /* 1 counting, 2 writing, 0 the FDR collection (not checkpointed) */
    uint64_t records_total;       /* records of the work list (checkpoints) */
    uint64_t resumed;             /* records of the main pass done by earlier runs */
};

/* One pass over all tiles: emit = 0 counts and fills the histograms (and
 * keeps the selected pairs when jb->keep_pairs), emit = 1 writes the
 * selected pairs (or, with jb->collect, keeps their x). */
fd_status spearman_pass(spearman_run *jb, int emit);

/* Records of 4 words, {first row block, first and end column block, row
 * blocks}: rows of a record for this run's backend and selection. */
uint64_t spearman_rows_per_record(const spearman_run *jb);
/* Whether a record read from a checkpoint (words long) names only row and
 * column blocks of jb's matrices (a ckpt_record_check; arg: jb). */
int spearman_record_valid(const void *jb, const uint64_t *rec, size_t words);
/* Writes what pass 1 kept (jb->nkept per thread). */
fd_status spearman_write_kept(spearman_run *jb);
/* Writes n pairs (i, j, rho, p) to h5 (a segment, or the part). */
fd_status spearman_write_pairs(spearman_run *jb, spearman_h5 *h5, const spair *q, size_t n);


#endif
