/* SPDX-License-Identifier: BSD-3-Clause */
/* Density peak clustering (Rodriguez & Laio, Science 344, 2014), exact,
 * without the N x N distance matrix: every quantity is computed row by
 * row over all points (docs/algorithms.md, "Density peaks").
 *
 * Order: point j is denser than point i when rho_j > rho_i, or rho_j =
 * rho_i and j < i.  This total order is used everywhere, so that results
 * never depend on ranks, threads or the backend. */
#ifndef FD_DPC_H
#define FD_DPC_H

#include "../common/progress.h"
#include "points.h"

#include <stdint.h>

enum { DPC_CUTOFF = 0, DPC_GAUSSIAN = 1 };

/* d_c from a rule, the same on every rank (seeded):
 *  percent P: the P-th percentile (nearest rank) of the pairwise
 *    distances, over every pair when there are at most DPC_EXACT_PAIRS,
 *    else over that many pairs drawn with the seed;
 *  neighbors K: the distance that K neighbours lie within on average:
 *    the (K s)-th smallest distance from s points (all points up to
 *    DPC_NEIGHBOR_ROWS, else a seeded sample) to every other point. */
#define DPC_EXACT_PAIRS 10000000ull
#define DPC_NEIGHBOR_ROWS 2048u
/* From this many points of 1 to 3 coordinates, d_c from --neighbors is
 * found on a grid (the same value; dpc.c, dc_grid). */
#define DPC_DC_GRID_MIN 65536u
fd_status dpc_dc_percent(const dpc_points *p, double percent, uint64_t seed, double *dc);
fd_status dpc_dc_neighbors(const dpc_points *p, double k, uint64_t seed, int threads, double *dc);
/* The parts of the neighbours rule a backend shares: the s rows it looks
 * from (*rows: malloc'd) and the rank m of the squared distance d_c
 * comes from; and d_c from that squared distance (FD_ERR_INPUT for 0). */
fd_status dpc_neighbor_rows(const dpc_points *p, double k, uint64_t seed, uint64_t **rows, uint64_t *s, uint64_t *m);
fd_status dpc_dc_from_d2(double d2, double k, double *dc);

/* Points [i0, i1): rho (cutoff: points j != i closer than d_c; Gaussian:
 * sum over j != i of exp(-(d_ij / d_c)^2)), T threads.  The passes count
 * the rows they finish in prog (NULL: none). */
/* The cutoff kernel counts the points at distance d < d_c, d the
 * correctly rounded sqrt of the squared distance (docs/algorithms.md):
 * d2 < dpc_cutoff_d2(dc) says exactly that (it is the least double T
 * with sqrt(T) >= dc; dc * dc rounded can be an ulp off either way).
 * dpc_kernel_d2: that for the cutoff kernel, dc * dc (the Gaussian's
 * scale) for the other.  Every backend compares with these. */
double dpc_cutoff_d2(double dc);
double dpc_kernel_d2(double dc, int kernel);

fd_status dpc_rho_rows(const dpc_points *p, double dc, int kernel, uint64_t i0, uint64_t i1, int threads,
                       double *rho, fd_progress *prog);

/* Points [i0, i1), given every rho: delta (distance to the nearest denser
 * point; ties: the smaller index) and parent; the densest point gets its
 * largest distance to any point and parent -1. */
fd_status dpc_delta_rows(const dpc_points *p, const double *rho, uint64_t i0, uint64_t i1, int threads,
                         double *delta, int64_t *parent, fd_progress *prog);

/* Centres and labels, from rho, delta and parent of every point. */
typedef struct dpc_centers_rule {
    uint32_t k;           /* > 0: the k of largest gamma = rho delta */
    double rho_min, delta_min; /* k = 0 and delta_min > 0: rho > rho_min and delta > delta_min */
    /* otherwise automatic, by one of two rules (both are computed and
     * reported, dpc_auto_report):
     *  - gap (outliers = 0): gamma sorted in decreasing order, the centres
     *    end at the largest ratio gamma_(q) / gamma_(q+1) for q up to
     *    DPC_AUTO_MAX (a gap in the decision graph; a heuristic);
     *  - outliers (outliers = 1): the points whose log gamma lies more than
     *    z robust standard deviations above the median of log gamma (median
     *    and 1.4826 MAD of the positive gammas other than the densest
     *    point's), z the normal quantile of alpha / n: an outlier test at
     *    level alpha over all n points (Bonferroni); docs/algorithms.md. */
    int outliers;
    double alpha;         /* the outlier rule's level (0: DPC_OUTLIER_ALPHA) */
} dpc_centers_rule;
#define DPC_AUTO_MAX 1000
#define DPC_OUTLIER_ALPHA 0.01
/* The outlier rule's median and MAD come from at most this many of the
 * positive gammas (every k-th, a deterministic sample): a sort of 10^7
 * would cost more than the rest of the assignment. */
#define DPC_OUTLIER_SAMPLE (1u << 18)

/* What the automatic rules found, for the summary and the file. */
typedef struct dpc_auto_report {
    int automatic;        /* the rule was automatic (else the rest is unset) */
    uint64_t gap, outliers; /* centres each rule gives (the densest point included) */
    double gamma_thr;     /* the outlier rule's threshold on gamma (inf: no spread to test against) */
    double z, alpha, log_median, log_scale;
} dpc_auto_report;

/* The centres: labels 1..K for them in decreasing gamma (ties: smaller
 * index), 0 for every other point; gamma and the centre indices (caller
 * frees) out.  The densest point is always a centre. */
fd_status dpc_centers(const dpc_points *p, const double *rho, const double *delta, const int64_t *parent,
                      const dpc_centers_rule *rule, double *gamma, int32_t *labels, int64_t **centers, uint32_t *k,
                      dpc_auto_report *rep);
/* The outlier rule's threshold over gamma of n points (top: the densest,
 * left out of the fit) at level alpha, into rep (gamma_thr, z, alpha,
 * log_median, log_scale). */
fd_status dpc_gamma_outliers(uint64_t n, const double *gamma, uint64_t top, double alpha, dpc_auto_report *rep);
/* Every point still labelled 0 takes the label of the first centre up its
 * chain of parents: what assigning in density order gives, since a parent
 * is always denser.  FD_ERR_INTERNAL for a cycle of parents or one out of
 * range (a bug, never a hang). */
fd_status dpc_label_chains(uint64_t n, const int64_t *parent, int32_t *labels);
/* Both. */
fd_status dpc_assign(const dpc_points *p, const double *rho, const double *delta, const int64_t *parent,
                     const dpc_centers_rule *rule, double *gamma, int32_t *labels, int64_t **centers, uint32_t *k);

/* The halo (Rodriguez & Laio): the border density of cluster c is the
 * largest (rho_i + rho_j) / 2 over pairs i in c, j in another cluster,
 * closer than d_c.  dpc_halo_border raises border[0..k] with the pairs
 * of rows [i0, i1) (every rank its own rows, then the maximum over
 * ranks); dpc_halo_core: points less dense than their cluster's border
 * are halo, core[i] = 0, else core[i] = labels[i]. */
fd_status dpc_halo_border(const dpc_points *p, double dc, const double *rho, const int32_t *labels, uint32_t k,
                          uint64_t i0, uint64_t i1, int threads, double *border, fd_progress *prog);
void dpc_halo_core(uint64_t n, const double *rho, const int32_t *labels, const double *border, int32_t *core);

/* The adjusted Rand index of two labellings of n points. */
double dpc_ari(const int32_t *a, const int64_t *b, uint64_t n);

#endif
