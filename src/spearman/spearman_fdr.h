/* SPDX-License-Identifier: BSD-3-Clause */
/* --fdr Q: the exact Benjamini-Hochberg cutoff after pass 1
 * (spearman_fdr.c; docs/algorithms.md). */
#ifndef FD_SPEARMAN_FDR_H
#define FD_SPEARMAN_FDR_H

#include "spearman_pass.h"

/* From pass 1's FDR histogram (jb->xhist, reduced over ranks): the
 * cutoff into jb->sel and jb->fdr_cut, the pairs it selects into
 * jb->selected; a collecting pass when the histogram's bins do not
 * decide it.  Collective. */
fd_status spearman_fdr_cutoff(spearman_run *jb);

/* The selection of the pairs whose key lies in [lo, hi] (jb->fdr_cut),
 * into jb->sel: spearman_sel_p under --missing pairwise, else
 * spearman_sel_x. */
void spearman_fdr_select(spearman_run *jb, double lo, double hi);

#endif
