#include "cmds.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

fd_status opt_u64(const char *opt, const char *val, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!val || *val == '-' || *val == 0) goto bad;
    unsigned long long v = strtoull(val, &end, 10);
    if (errno || *end) goto bad;
    *out = v;
    return FD_OK;
bad:
    return fd_fail(FD_ERR_USAGE, "%s: '%s' is not a non-negative integer", opt, val ? val : "");
}

fd_status opt_u32(const char *opt, const char *val, uint32_t lo, uint32_t hi, uint32_t *out)
{
    uint64_t v = 0;
    FD_TRY(opt_u64(opt, val, &v));
    if (v < lo || v > hi) return fd_fail(FD_ERR_USAGE, "%s: %s is outside %u..%u", opt, val, lo, hi);
    *out = (uint32_t)v;
    return FD_OK;
}

fd_status opt_f64(const char *opt, const char *val, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = val ? strtod(val, &end) : NAN;
    if (!val || errno || *end || end == val || !isfinite(v))
        return fd_fail(FD_ERR_USAGE, "%s: '%s' is not a number", opt, val ? val : "");
    if (v < lo || v > hi) return fd_fail(FD_ERR_USAGE, "%s: %s is outside %g..%g", opt, val, lo, hi);
    *out = v;
    return FD_OK;
}

fd_status opt_bad(const char *cmd)
{
    return fd_fail(FD_ERR_USAGE, "see 'fcbo-dist %s --help'", cmd);
}

fd_status opt_dims(const char *opt, const char *val, const char *what, uint32_t max, uint64_t *v, uint32_t *n)
{
    *n = 0;
    for (const char *p = val; *p;) {
        char *end;
        const unsigned long long x = strtoull(p, &end, 10);
        if (end == p || x == 0 || *n == max || (*end && *end != 'x'))
            return fd_fail(FD_ERR_USAGE, "%s %s: expected %s joined by x, as 2x2x2", opt, val, what);
        v[(*n)++] = x;
        p = *end ? end + 1 : end;
    }
    if (*n == 0) return fd_fail(FD_ERR_USAGE, "%s: expected %s joined by x, as 2x2x2", opt, what);
    return FD_OK;
}
