/* SPDX-License-Identifier: BSD-3-Clause */
/* cuBLAS through dlopen (see cublas_load.h). */
#include "cublas_load.h"

#include "../common/dynlib.h"

#define STR_(x) #x
#define STR(x) STR_(x)

static fd_cublas fns;

static const fd_dynsym syms[] = {
    {"cublasCreate_v2", (void **)&fns.create, 0},
    {"cublasDestroy_v2", (void **)&fns.destroy, 0},
    {"cublasSetStream_v2", (void **)&fns.set_stream, 0},
    {"cublasDgemm_v2", (void **)&fns.dgemm, 0},
    {NULL, NULL, 0},
};

static fd_dynlib lib = {
    /* the major version built against: its functions' signatures */
    "libcublas.so." STR(CUBLAS_VER_MAJOR),
#ifdef FD_CUBLAS_DIR
    FD_CUBLAS_DIR,
#else
    NULL,
#endif
    "bcp's CUDA backend", FD_ERR_CUDA, syms, NULL, FD_DYNLIB_STATE};

void fd_cublas_preload(void) { fd_dynlib_preload(&lib); }

fd_status fd_cublas_get(const fd_cublas **out)
{
    *out = NULL;
    FD_TRY(fd_dynlib_load(&lib));
    *out = &fns;
    return FD_OK;
}
