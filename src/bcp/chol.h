/* The Cholesky factor of a small symmetric positive definite matrix, for
 * bcp's R x R systems (the VB covariances, the fusion's normal equations). */
#ifndef FD_BCP_CHOL_H
#define FD_BCP_CHOL_H

#include <stdint.h>

/* L (R x R, row-major, lower triangle written) with S = L L^T; L may be S
 * itself.  0 when S is not positive definite. */
int bcp_cholesky(const double *S, uint32_t R, double *L);

/* inv = S^-1 (R x R, row-major, exactly symmetric) and *logdet = ln det S
 * for S symmetric positive definite, by the Cholesky factor; work holds
 * 2 R^2 doubles.  0 when S is not positive definite. */
int bcp_spd_inverse(const double *S, uint32_t R, double *work, double *inv, double *logdet);

#endif
