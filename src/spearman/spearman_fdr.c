/* SPDX-License-Identifier: BSD-3-Clause */
/* --fdr Q: the exact Benjamini-Hochberg cutoff (docs/algorithms.md). */
#include "spearman_fdr.h"

#include "pvalue.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* --fdr Q, Benjamini-Hochberg over the m pairs tested: the largest k with
 * p_(k) <= k Q / m, and every pair with p <= p_(k).  p grows with x =
 * 1 - rho^2, so that is every pair with x <= x_(k) (Kendall's p depends
 * on both rows' ties too: there the key x is p itself).  Pass 1 binned the
 * pairs with p <= Q (no cutoff lies beyond) by x; the bins bound k: above
 * the highest bin where even its lowest x could pass (optimistic) none
 * can, and from the highest bin where its highest x passes at its lowest
 * rank (pessimistic) on, one does.  A collecting pass gathers the exact x
 * of the pairs between the two, from all ranks; sorted, they give k and
 * x_(k) exactly.  Ties share a p and therefore fall on the same side. */
/* The p of --fdr's key: x = 1 - rho^2 for Spearman (p grows with it),
 * p itself for Kendall (whose p is not a function of tau alone) and
 * --missing pairwise (whose pairs' p have their own n). */
static double key_p(const spearman_run *jb, double key, int dof)
{
    return jb->sel.pkey ? key : spearman_p_of_x(key, dof);
}

/* The p of a bin's edge: the bins are of x but for Kendall, of p.  Under
 * --missing pairwise a bin holds the complete rows' pairs by x and the
 * others by their p between the edges' (acc->pedge), so that the GPU
 * bins the first kind as it bins every x. */
static double edge_p(const spearman_run *jb, double edge, int dof)
{
    return jb->sel.kendall ? edge : spearman_p_of_x(edge, dof);
}

/* --missing pairwise: keys of p, bins of x. */
static int pairwise(const spearman_run *jb) { return jb->sel.pkey && !jb->sel.kendall; }

void spearman_fdr_select(spearman_run *jb, double lo, double hi)
{
    if (pairwise(jb)) spearman_sel_p(&jb->sel, lo, hi, jb->x->n);
    else spearman_sel_x(&jb->sel, lo, hi, jb->x->n);
}

/* The selection of the pairs in bins [b_lo, b_hi], a little wider: a
 * range of keys, of p where the bins' edges are x and the keys p. */
static void select_bins(spearman_run *jb, int b_lo, int b_hi, double eps)
{
    const double lo = fmax(0, b_lo / jb->xscale - eps), hi = (b_hi + 1) / jb->xscale + eps;
    if (pairwise(jb)) spearman_fdr_select(jb, spearman_p_of_x(lo, jb->sel.dof), spearman_p_of_x(hi, jb->sel.dof));
    else spearman_fdr_select(jb, lo, hi);
}

fd_status spearman_fdr_cutoff(spearman_run *jb)
{
    fd_status st = FD_OK;
    const double Q = jb->o->value, m = (double)jb->pairs;
    const int dof = jb->sel.dof;
    uint64_t *cum = NULL;
    double *all = NULL;
    int *counts = NULL, *displs = NULL;
    if (fd_mpi_active())
        MPI_CHECK_GOTO(MPI_Allreduce(MPI_IN_PLACE, jb->xhist, FDR_BINS, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD), st, done);
    FD_ALLOC_GOTO(cum, FDR_BINS, st, done);
    for (uint32_t b = 0; b < FDR_BINS; b++) cum[b] = jb->xhist[b] + (b ? cum[b - 1] : 0);
    int b_hi = -1, b_lo = -1;
    const double eps = 1e-12;
    for (int b = FDR_BINS - 1; b >= 0 && b_hi < 0; b--)
        if (jb->xhist[b] && edge_p(jb, fmax(0, b / jb->xscale - eps), dof) <= (double)cum[b] * Q / m) b_hi = b;
    if (b_hi < 0) { /* no pair passes: select none */
        jb->fdr_cut[0] = 1;
        jb->fdr_cut[1] = 0;
        spearman_fdr_select(jb, 1, 0);
        jb->selected = 0;
        goto done;
    }
    for (int b = b_hi; b >= 0 && b_lo < 0; b--)
        if (jb->xhist[b] &&
            edge_p(jb, (b + 1) / jb->xscale + eps, dof) <= (double)((b ? cum[b - 1] : 0) + 1) * Q / m)
            b_lo = b;
    if (b_lo < 0) b_lo = 0;
    jb->bin_lo = b_lo;
    jb->bin_hi = b_hi;
    jb->collect = 1;
    select_bins(jb, b_lo, b_hi, eps);
    uint64_t pairs = jb->pairs, selected = jb->selected;
    fd_status local = spearman_pass(jb, 1);
    jb->pairs = pairs;
    jb->selected = selected;
    jb->collect = 0;
    FD_TRY_GOTO(fd_mpi_agree(local, NULL), st, done);
    size_t total = jb->nxs;
    const double *xs = jb->xs;
    if (fd_mpi_active() && jb->mpi.size > 1) {
        int mine = (int)jb->nxs, P = jb->mpi.size;
        if (jb->nxs > INT32_MAX) { st = fd_fail(FD_ERR_INTERNAL, "too many pairs at the FDR cutoff"); goto done; }
        FD_ALLOC_GOTO(counts, (size_t)P, st, done);
        FD_ALLOC_GOTO(displs, (size_t)P, st, done);
        MPI_CHECK_GOTO(MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD), st, done);
        total = 0;
        for (int r = 0; r < P; r++) {
            displs[r] = (int)total;
            total += (size_t)counts[r];
        }
        if (total > INT32_MAX) { st = fd_fail(FD_ERR_INTERNAL, "too many pairs at the FDR cutoff"); goto done; }
        FD_ALLOC_GOTO(all, total + 1, st, done);
        MPI_CHECK_GOTO(MPI_Allgatherv(jb->xs, mine, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD), st, done);
        xs = all;
    }
    qsort((void *)xs, total, sizeof *xs, cmp_double);
    uint64_t base = b_lo ? cum[b_lo - 1] : 0, kstar = 0;
    double xstar = -1;
    for (size_t k = 0; k < total; k++)
        if (key_p(jb, xs[k], dof) <= (double)(base + k + 1) * Q / m) {
            kstar = base + k + 1;
            xstar = xs[k];
        }
    if (kstar == 0 && b_lo > 0) {
        /* Only possible when no bin passed the pessimistic test: then the
         * cutoff may lie lower still, which the optimistic scan excludes
         * only above b_hi.  Fall back to none rather than guess. */
        st = fd_fail(FD_ERR_INTERNAL, "the FDR cutoff was not found between bins %d and %d", b_lo, b_hi);
        goto done;
    }
    jb->fdr_cut[0] = -1;
    jb->fdr_cut[1] = xstar;
    spearman_fdr_select(jb, -1, xstar);
    jb->selected = kstar;
done:
    free(cum);
    free(all);
    free(counts);
    free(displs);
    return st;
}

