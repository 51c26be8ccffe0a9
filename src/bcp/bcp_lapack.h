/* SPDX-License-Identifier: BSD-3-Clause */
/* LAPACKE's four routines bcp calls (chol.c: dpotrf, dpotri, dposv; bcp.c:
 * dsyevr), loaded by dlopen when a fit starts (src/common/dynlib.h) rather
 * than linked, so that the subcommands that never factorise do not load
 * LAPACK and the OpenBLAS under it. */
#ifndef FD_BCP_LAPACK_H
#define FD_BCP_LAPACK_H

#include "../common/status.h"

#include <lapacke.h>
#undef I /* complex.h's, through lapacke.h: I is a mode's length in bcp */

typedef struct {
    __typeof__(&LAPACKE_dpotrf) dpotrf;
    __typeof__(&LAPACKE_dpotri) dpotri;
    __typeof__(&LAPACKE_dposv) dposv;
    __typeof__(&LAPACKE_dsyevr) dsyevr;
} bcp_lapacke;

/* Filled by bcp_lapack_load(), which every fit (bcp_fit, bcp_fit_masked,
 * bcp_fuse) calls first; a test that calls chol.c directly loads it too. */
extern bcp_lapacke bcp_lapack;

/* Loads LAPACKE (and OpenBLAS's dgemm, gemm.h) once, with OpenBLAS's
 * threads stopped; a library that cannot be loaded is FD_ERR_UNAVAILABLE
 * naming it. */
fd_status bcp_lapack_load(void);

#endif
