/* Fuzz target: the command-line value parsers every subcommand uses
 * (integers, bounded integers, floating point, AxBxC shapes).  The input
 * is split at the first NUL into an option name and its value.  A parser
 * must accept a value into range or refuse it, never crash; what it
 * accepts must look like what --help documents (digits, AxBxC). */
#include "cmds/cmds.h"
#include "fuzz_file.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

/* What an accepted integer looks like: decimal digits only (no sign, no
 * space, which strtoull would take and, for " -5", wrap). */
static int all_digits(const char *s, char stop)
{
    if (!isdigit((unsigned char)*s)) return 0;
    while (*s && *s != stop) {
        if (!isdigit((unsigned char)*s)) return 0;
        s++;
    }
    return 1;
}

/* AxBxC: digit runs joined by single x's, nothing after the last. */
static int is_dims(const char *s)
{
    for (;;) {
        if (!all_digits(s, 'x')) return 0;
        s = strchr(s, 'x');
        if (!s) return 1;
        s++;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096) return 0;
    char buf[4097];
    memcpy(buf, data, size);
    buf[size] = 0;
    const char *opt = buf, *val = buf + strlen(buf) + (strlen(buf) < size);
    fd_errclear();
    uint64_t u64;
    if (opt_u64(opt, val, &u64) == FD_OK && !all_digits(val, 0)) abort();
    uint32_t u32;
    if (opt_u32(opt, val, 3, 1000, &u32) == FD_OK && (u32 < 3 || u32 > 1000)) abort();
    double f;
    if (opt_f64(opt, val, -1.5, 2.5, &f) == FD_OK && !(f >= -1.5 && f <= 2.5)) abort();
    uint64_t dims[8];
    uint32_t n = 0;
    if (opt_dims(opt, val, "mode", 8, dims, &n) == FD_OK) {
        if (n < 1 || n > 8 || !is_dims(val)) abort();
        for (uint32_t k = 0; k < n; k++)
            if (dims[k] == 0) abort();
    }
    return 0;
}
