/* Inside a spearman run: the state every stage shares (spearman_job.c)
 * and the FDR cutoff (spearman_fdr.c), which runs extra passes. */
#ifndef FD_SPEARMAN_JOB_IMPL_H
#define FD_SPEARMAN_JOB_IMPL_H

#include "../common/progress.h"
#include "../job/ckpt.h"
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

/* A thread's open checkpoint segment (spearman_ckpt.c). */
typedef struct spearman_seg {
    spearman_h5 *w;               /* NULL until the thread has something to write */
    double opened;
    uint64_t *ids;                /* records whose results it holds in full */
    size_t nids, capids;
    uint64_t pairs, selected;     /* the thread's counters when it opened */
    uint64_t *hist, *xhist;       /* its histograms then */
    uint64_t kept;                /* pairs kept by pass 1 on this thread */
    int complete;                 /* it holds every selected pair of its records */
} spearman_seg;

/* What the segments of earlier runs hold, per stage (rank 0). */
typedef struct spearman_old {
    uint8_t *done[3];             /* per record id */
    uint64_t ndone[3];
    uint64_t pairs[3], selected[3], *hist, *xhist;
    char **paths[3];              /* segments with pairs */
    size_t npaths[3], cappaths[3];
    int incomplete;               /* some pass-1 segment did not keep its pairs */
} spearman_old;

typedef struct {
    const spearman_opts *o;
    const struct spearman_ops *ops;
    void *dev;                    /* the backend's state (GPU: the resident rank matrix) */
    int device;                   /* the rank's GPU, for GPU backends */
    fd_mpi mpi;                   /* the job's (job/job.h) */
    spearman_mat *x, *y;          /* y == x for the triangle */
    spearman_sel sel;
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
    int collect;
    int bin_lo, bin_hi;
    double *xs;
    size_t nxs, capxs;
    double fdr_cut[2];            /* the x range of spearman_sel_x that the cutoff chose */
    double t0, load_s, pass1_s, fdr_s, pass2_s; /* fdr_s: --fdr's cutoff (its collecting pass) */
    double t_enum;                /* the passes' start */
    h5part_rank *reps;            /* rank 0: every rank's row of /ranks */
    /* Checkpoints (-o with --checkpoint-seconds > 0): every thread writes
     * its results to segments of its own; NULL when off. */
    ckpt *ck;
    int stage;                    /* 1 counting, 2 writing, 0 the FDR collection (not checkpointed) */
    spearman_seg *seg;            /* one per thread */
    fd_records recs;              /* rank 0: the work list, the same for every pass */
    uint64_t *rec_words;
    size_t *rec_start;
    spearman_old old;
    char **mine[3];               /* this rank's committed segments per stage */
    size_t nmine[3], capmine[3];
    uint64_t resumed;             /* records of the main pass done by earlier runs */
} job;

/* One pass over all tiles: emit = 0 counts and fills the histograms (and
 * keeps the selected pairs when jb->keep_pairs), emit = 1 writes the
 * selected pairs (or, with jb->collect, keeps their x). */
fd_status spearman_pass(job *jb, int emit);

/* --fdr: the exact Benjamini-Hochberg cutoff after pass 1 (spearman_fdr.c). */
fd_status spearman_fdr_cutoff(job *jb);

/* Checkpoints (spearman_ckpt.c).  open: collective, after setup.  list:
 * rank 0, this pass's records (all of them, or the saved list on
 * --resume) less those earlier runs did in this stage; the caller frees
 * out->data, ->start and ->ids.  record_done: a thread finished record
 * id; its results go to its segment, committed when due (pass_start:
 * the thread's counters start from zero).  flush: a
 * thread's buffered pairs into its segment.  pass_end: commits every
 * thread's segment and, on rank 0, adds what earlier runs did in this
 * stage.  build: jb->h5, the part (or single file) at path, made from the
 * stage's segments (this rank's and its share of earlier runs'): the
 * largest becomes the part in place, the others' pairs are copied in;
 * stage 0: an empty one (--count-only).  Collective.  close: removes the
 * checkpoint after a success, and keeps it after a failure that left
 * work worth resuming. */
fd_status spearman_ckpt_open(job *jb);
fd_status spearman_ckpt_list(job *jb, const fd_records *all, fd_records *out);
void spearman_ckpt_pass_start(job *jb, int t);
fd_status spearman_ckpt_record_done(job *jb, int t, spearman_acc *a, uint64_t id);
fd_status spearman_ckpt_flush(job *jb, int t, spearman_acc *a);
fd_status spearman_ckpt_pass_end(job *jb);
fd_status spearman_ckpt_build(job *jb, int stage, const char *path);
/* --fdr with checkpoints: the cutoff of an earlier run when it got that
 * far (no collecting pass), else spearman_fdr_cutoff, saved for the next
 * --resume.  Collective. */
fd_status spearman_ckpt_fdr(job *jb);
void spearman_ckpt_close(job *jb, fd_status st);
/* Writes n pairs (i, j, rho, p) to h5 (a segment, or the part). */
fd_status spearman_write_pairs(job *jb, spearman_h5 *h5, const spair *q, size_t n);


#endif
