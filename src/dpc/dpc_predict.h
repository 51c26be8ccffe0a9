/* SPDX-License-Identifier: BSD-3-Clause */
/* dpc --predict: new points assigned to a fit's clusters by the fit's own
 * rule (Rodriguez & Laio: a point joins its nearest denser neighbour's
 * cluster), against the fitted points only: a new point's density is
 * counted among them with the fit's kernel and d_c, and it takes the label
 * of the nearest fitted point of higher density within d_c, or of its
 * nearest fitted point when there is none (near a peak, or an outlier). */
#ifndef FD_DPC_PREDICT_H
#define FD_DPC_PREDICT_H

#include "points.h"

typedef struct dpc_prediction {
    uint64_t n;
    double *rho;        /* density among the fitted points */
    int64_t *parent;    /* the fitted point whose label it takes (0-based row of the fit) */
    double *delta;      /* the distance to it */
    int32_t *labels;
} dpc_prediction;

/* q's points (the same coordinates as the fit's) against the fit: its
 * points, densities and labels, d_c and kernel (DPC_CUTOFF or
 * DPC_GAUSSIAN).  Exact, every pair. */
fd_status dpc_predict(const dpc_points *fit, const double *rho, const int32_t *labels, double dc, int kernel,
                      const dpc_points *q, int threads, dpc_prediction *out);
void dpc_prediction_free(dpc_prediction *p);

#endif
