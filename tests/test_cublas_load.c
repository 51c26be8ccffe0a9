/* cuBLAS loaded on first use (src/cuda/cublas_load.h), where no GPU is
 * needed: not loaded before (this test links what fcbo-dist links, so
 * neither does the binary), then found (by the usual search or the
 * toolkit's folder) with every function bcp calls. */
#include "cuda/cublas_load.h"
#include "testutil.h"

#include <dlfcn.h>

#define STR_(x) #x
#define STR(x) STR_(x)

int main(void)
{
    const char *soname = "libcublas.so." STR(CUBLAS_VER_MAJOR);
    CHECK(dlopen(soname, RTLD_NOW | RTLD_NOLOAD) == NULL, "%s is loaded before it was asked for (linked?)", soname);
    const fd_cublas *a = NULL, *b = NULL;
    CHECK(fd_cublas_get(&a) == FD_OK && a, "loading cuBLAS: %s", fd_errmsg());
    if (a) CHECK(a->create && a->destroy && a->set_stream && a->dgemm, "a function is missing");
    CHECK(fd_cublas_get(&b) == FD_OK && b == a, "a second call loads again");
    CHECK(dlopen(soname, RTLD_NOW | RTLD_NOLOAD) != NULL, "%s not loaded after fd_cublas_get", soname);
    return t_report();
}
