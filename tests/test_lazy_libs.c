/* cairo, OpenBLAS, LAPACKE and NCCL are loaded when a command first needs
 * them, not linked (src/common/dynlib.h): none is in the process when it
 * starts (this test links what fcbo-dist links, so neither is one in the
 * binary), and each is there, with its functions, after its loader ran.
 * NCCL's loader needs two MPI ranks with GPUs: only its absence is
 * checked here.  And the loader's own contract: a missing library or
 * symbol is an error naming it, each time it is asked for. */
#include "bcp/bcp_lapack.h"
#include "common/dynlib.h"
#include "common/gemm.h"
#include "dpc/dpc_plot.h"
#include "testutil.h"
#include "version.h"

#include <link.h>
#include <string.h>

/* Whether a loaded object's path contains part. */
static int find_part(struct dl_phdr_info *info, size_t size, void *part)
{
    (void)size;
    return info->dlpi_name && strstr(info->dlpi_name, (const char *)part) != NULL;
}

static int loaded(const char *part) { return dl_iterate_phdr(find_part, (void *)part); }

static void (*no_such_fn)(void);

int main(void)
{
    const char *late[] = {"libcairo", "libopenblas", "liblapack", "libnccl", "libblas"};
    for (size_t k = 0; k < sizeof late / sizeof *late; k++)
        CHECK(!loaded(late[k]), "%s is in the process before anything asked for it (linked?)", late[k]);

    if (FD_HAVE_CAIRO) {
        CHECK(dpc_plot_ready() == FD_OK, "cairo: %s", fd_errmsg());
        CHECK(loaded("libcairo"), "libcairo not loaded after dpc_plot_ready");
    } else {
        CHECK(dpc_plot_ready() == FD_ERR_UNAVAILABLE, "--plot without cairo in the build is not refused");
    }
    CHECK(bcp_lapack_load() == FD_OK, "LAPACKE: %s", fd_errmsg());
    CHECK(bcp_lapack.dpotrf && bcp_lapack.dpotri && bcp_lapack.dposv && bcp_lapack.dsyevr, "a LAPACKE function is missing");
    CHECK(bcp_lapack_load() == FD_OK, "a second load fails: %s", fd_errmsg());
    if (FD_HAVE_OPENBLAS) CHECK(loaded("libopenblas"), "OpenBLAS not loaded after bcp_lapack_load");
    CHECK(!loaded("libnccl"), "NCCL loaded with no GPU ranks");

    /* A library that is not there, and one that lacks a symbol. */
    static const fd_dynsym none_syms[] = {{"f", (void **)&no_such_fn, 0}, {NULL, NULL, 0}};
    static fd_dynlib none = {"libfcbo-no-such-library.so.9", "/nonexistent", "this test", FD_ERR_UNAVAILABLE, none_syms,
                             NULL, FD_DYNLIB_STATE};
    for (int k = 0; k < 2; k++) {
        fd_errclear(); /* the first error is kept: each case reads its own */
        CHECK(fd_dynlib_load(&none) == FD_ERR_UNAVAILABLE, "a missing library loads");
        CHECK(strstr(fd_errmsg(), "libfcbo-no-such-library.so.9") && strstr(fd_errmsg(), "this test"),
              "the message does not name the library and its user: %s", fd_errmsg());
    }
    static const fd_dynsym bad_syms[] = {{"fcbo_no_such_symbol", (void **)&no_such_fn, 0}, {NULL, NULL, 0}};
    static fd_dynlib bad = {"libc.so.6", NULL, "this test", FD_ERR_UNAVAILABLE, bad_syms, NULL, FD_DYNLIB_STATE};
    fd_errclear();
    CHECK(fd_dynlib_load(&bad) == FD_ERR_UNAVAILABLE && strstr(fd_errmsg(), "fcbo_no_such_symbol"),
          "a missing symbol is not an error naming it: %s", fd_errmsg());
    static const fd_dynsym opt_syms[] = {{"fcbo_no_such_symbol", (void **)&no_such_fn, 1}, {NULL, NULL, 0}};
    static fd_dynlib opt = {"libc.so.6", NULL, "this test", FD_ERR_UNAVAILABLE, opt_syms, NULL, FD_DYNLIB_STATE};
    CHECK(fd_dynlib_load(&opt) == FD_OK && !no_such_fn, "an optional symbol that is missing is not NULL or fails");
    return t_report();
}
