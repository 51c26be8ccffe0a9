/* SPDX-License-Identifier: BSD-3-Clause */
/* DIR/dpc.h5: per point labels, rho, delta, parent, gamma (and the core
 * labels with --halo); the centres; d_c, the parameters and the timings as
 * attributes (docs/formats.md).  Written under a temporary name and
 * renamed, so a dpc.h5 is always whole. */
#ifndef FD_DPC_H5_H
#define FD_DPC_H5_H

#include "dpc_job.h"
#include "dpc_predict.h"

#include <hdf5.h>
#include <stdio.h>

typedef struct dpc_result {
    const dpc_points *p;
    double dc;
    const double *rho, *delta, *gamma;
    const int64_t *parent, *centers;
    const int32_t *labels, *core; /* core: NULL without --halo */
    uint32_t k;
    double ari;                   /* NaN without a label column */
    double t_load, t_dc, t_rho, t_delta, t_assign;
    int ranks, threads;
    const dpc_points *q;          /* --predict's points and their assignment, or NULL */
    const dpc_prediction *pred;
    const dpc_auto_report *rep;   /* the automatic rules' findings (rep->automatic 0: another rule) */
    const char *sha256, *q_sha256; /* the input files' hashes (q_sha256 with q only) */
} dpc_result;

fd_status dpc_h5_write(const char *path, const dpc_opts *o, const dpc_result *r);

/* `info` on a dpc.h5 (format "fcbo-dist dpc"): a summary, or with --text
 * one line per point, "point label rho delta parent". */
fd_status dpc_h5_info(hid_t f, const char *path, FILE *out);
fd_status dpc_h5_text(hid_t f, const char *path, FILE *out);

#endif
