/* SPDX-License-Identifier: BSD-3-Clause */
/* bcp's small symmetric positive definite systems (the VB covariances,
 * the fusion's normal equations), by LAPACK's Cholesky routines. */
#ifndef FD_BCP_CHOL_H
#define FD_BCP_CHOL_H

#include <stdint.h>

/* inv = S^-1 (R x R, row-major, exactly symmetric) and *logdet = ln det S
 * for S symmetric positive definite.  0 when S is not positive definite. */
int bcp_spd_inverse(const double *S, uint32_t R, double *inv, double *logdet);

/* X = B S^-1 (B and X rows x R, row-major) for S symmetric positive
 * definite (R x R; overwritten by its factor).  0 when S is not positive
 * definite. */
int bcp_spd_solve_right(double *S, uint32_t R, const double *B, uint64_t rows, double *X);

#endif
