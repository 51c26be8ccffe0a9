/* SPDX-License-Identifier: BSD-3-Clause */
/* cuBLAS through dlopen (see cublas_load.h). */
#include "cublas_load.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define STR_(x) #x
#define STR(x) STR_(x)
/* the major version built against: its functions' signatures */
#define SONAME "libcublas.so." STR(CUBLAS_VER_MAJOR)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static fd_cublas fns;
static char why[512]; /* empty once every function is found */

static void *sym(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    if (!p && !why[0]) snprintf(why, sizeof why, "%s has no %s", SONAME, name);
    return p;
}

static void load(void)
{
    /* the usual search first (LD_LIBRARY_PATH, the loader's cache), then
     * the toolkit the binary was built with */
    void *lib = dlopen(SONAME, RTLD_NOW | RTLD_LOCAL);
#ifdef FD_CUBLAS_DIR
    if (!lib) lib = dlopen(FD_CUBLAS_DIR "/" SONAME, RTLD_NOW | RTLD_LOCAL);
#endif
    if (!lib) {
        const char *e = dlerror();
        snprintf(why, sizeof why, "cannot load %s (bcp's CUDA backend needs it; add its folder to LD_LIBRARY_PATH): %s",
                 SONAME, e ? e : "not found");
        return;
    }
    *(void **)&fns.create = sym(lib, "cublasCreate_v2");
    *(void **)&fns.destroy = sym(lib, "cublasDestroy_v2");
    *(void **)&fns.set_stream = sym(lib, "cublasSetStream_v2");
    *(void **)&fns.dgemm = sym(lib, "cublasDgemm_v2");
    /* kept loaded to the end: handles made from it may outlive any caller */
}

fd_status fd_cublas_get(const fd_cublas **out)
{
    *out = NULL;
    if (pthread_once(&once, load) != 0) return fd_fail(FD_ERR_CUDA, "cannot load %s", SONAME);
    if (why[0]) return fd_fail(FD_ERR_CUDA, "%s", why);
    *out = &fns;
    return FD_OK;
}
