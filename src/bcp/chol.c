/* The Cholesky factor (see chol.h): row by row, each entry read from S
 * before it is written, so that L may be S. */
#include "chol.h"

#include <math.h>

int bcp_cholesky(const double *S, uint32_t R, double *L)
{
    for (uint32_t i = 0; i < R; i++)
        for (uint32_t j = 0; j <= i; j++) {
            double s = S[i * R + j];
            for (uint32_t k = 0; k < j; k++) s -= L[i * R + k] * L[j * R + k];
            if (i == j) {
                if (!(s > 0)) return 0;
                L[i * R + i] = sqrt(s);
            } else {
                L[i * R + j] = s / L[j * R + j];
            }
        }
    return 1;
}
