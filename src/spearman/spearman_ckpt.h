/* SPDX-License-Identifier: BSD-3-Clause */
/* Checkpoints of a spearman run (spearman_ckpt.c; job/ckpt.h for the
 * files, docs/architecture.md, "Checkpoints and --resume"). */
#ifndef FD_SPEARMAN_CKPT_H
#define FD_SPEARMAN_CKPT_H

#include "spearman_pass.h"

/* Opens DIR/spearman.checkpoint (or the one --resume names) and plugs
 * into the passes (jb->ck, jb->hooks).  Collective, after setup. */
fd_status spearman_ckpt_open(spearman_run *jb);
/* jb->h5, the part (or single file) at path, made from the stage's
 * segments (this rank's and its share of earlier runs'): the largest
 * becomes the part in place, the others' pairs are copied in; stage 0:
 * an empty one (--count-only).  Collective. */
fd_status spearman_ckpt_build(spearman_run *jb, int stage, const char *path);
/* --fdr: the cutoff of an earlier run when it got that far (no collecting
 * pass), else spearman_fdr_cutoff, saved for the next --resume; without
 * checkpoints, spearman_fdr_cutoff.  Collective. */
fd_status spearman_ckpt_fdr(spearman_run *jb);
/* Removes the checkpoint after a success, and keeps it after a failure
 * that left work worth resuming; frees what open made.  Safe without
 * checkpoints. */
void spearman_ckpt_close(spearman_run *jb, fd_status st);

#endif
