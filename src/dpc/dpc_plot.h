/* SPDX-License-Identifier: BSD-3-Clause */
/* --plot FILE.png: the decision graph (rho against delta, centres in
 * their clusters' colours) and, for 2-D points, the points coloured by
 * cluster (halo points grey), side by side.  Drawn with cairo where the
 * build found it (dpc_plot_cairo.c, which loads it when asked); --plot is
 * refused before anything runs where the build has no cairo
 * (dpc_plot_none.c) or it cannot be loaded. */
#ifndef FD_DPC_PLOT_H
#define FD_DPC_PLOT_H

#include "points.h"

/* FD_OK when --plot can draw (cairo built in, and loaded now); else
 * FD_ERR_UNAVAILABLE saying why. */
fd_status dpc_plot_ready(void);

/* core: the labels with halo points 0, or NULL; gamma_thr: the outlier
 * rule's threshold, drawn as the curve rho delta = gamma_thr (NaN: none).
 * Written under a temporary name and renamed. */
fd_status dpc_plot_write(const char *path, const dpc_points *p, const double *rho, const double *delta,
                         const int32_t *labels, const int32_t *core, const int64_t *centers, uint32_t k,
                         double gamma_thr);

#endif
