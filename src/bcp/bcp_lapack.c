/* SPDX-License-Identifier: BSD-3-Clause */
/* LAPACKE loaded when a fit starts (see bcp_lapack.h). */
#include "bcp_lapack.h"

#include "../common/dynlib.h"
#include "../common/gemm.h"

bcp_lapacke bcp_lapack;

static const fd_dynsym syms[] = {
    {"LAPACKE_dpotrf", (void **)&bcp_lapack.dpotrf, 0},
    {"LAPACKE_dpotri", (void **)&bcp_lapack.dpotri, 0},
    {"LAPACKE_dposv", (void **)&bcp_lapack.dposv, 0},
    {"LAPACKE_dsyevr", (void **)&bcp_lapack.dsyevr, 0},
    {NULL, NULL, 0},
};

/* A LAPACK on OpenBLAS starts OpenBLAS's pool as it loads, where the
 * build found no OpenBLAS of its own for fd_blas_load: stopped then. */
static fd_dynlib lib = {FD_LAPACKE_SONAME, FD_LAPACKE_DIR, "bcp", FD_ERR_UNAVAILABLE, syms, fd_blas_pool_stop,
                        FD_DYNLIB_STATE};

fd_status bcp_lapack_load(void)
{
    FD_TRY(fd_blas_load());
    FD_TRY(fd_dynlib_load(&lib));
    fd_blas_one_thread(); /* the calls are small R x R ones (chol.c) */
    return FD_OK;
}
