/* SPDX-License-Identifier: BSD-3-Clause */
#include "cmds.h"

#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A decimal integer at s: digits only (strtoull would also take a sign
 * and leading space, and wrap " -5" to 2^64 - 5), without overflow.  *end:
 * the first character after the digits; 0 when there are none or the
 * value is past 2^64 - 1. */
static int parse_decimal(const char *s, const char **end, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        const uint64_t d = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    *end = p;
    *out = v;
    return p > s;
}

fd_status opt_u64(const char *opt, const char *val, uint64_t *out)
{
    const char *end;
    uint64_t v;
    if (!val || !parse_decimal(val, &end, &v) || *end)
        return fd_fail(FD_ERR_USAGE, "%s: '%s' is not a non-negative integer (below 2^64)", opt, val ? val : "");
    *out = v;
    return FD_OK;
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

fd_status opt_header(const char *val, int *out)
{
    static const char *const words[] = {"auto", "yes", "no"};
    for (int k = 0; k < 3; k++)
        if (!strcmp(val, words[k])) {
            *out = k; /* FD_HEADER_AUTO, _YES, _NO */
            return FD_OK;
        }
    return fd_fail(FD_ERR_USAGE, "--header %s: expected auto, yes or no", val);
}

fd_status opt_bad(const char *cmd)
{
    return fd_fail(FD_ERR_USAGE, "see 'fcbo-dist %s --help'", cmd);
}

fd_status opt_dims(const char *opt, const char *val, const char *what, uint32_t max, uint64_t *v, uint32_t *n)
{
    *n = 0;
    for (const char *p = val; *p;) {
        const char *end;
        uint64_t x;
        /* "2x" (nothing after the last x) is refused too. */
        if (!parse_decimal(p, &end, &x) || x == 0 || *n == max || (*end && (*end != 'x' || !end[1])))
            return fd_fail(FD_ERR_USAGE, "%s %s: expected %s joined by x, as 2x2x2", opt, val, what);
        v[(*n)++] = x;
        p = *end ? end + 1 : end;
    }
    if (*n == 0) return fd_fail(FD_ERR_USAGE, "%s: expected %s joined by x, as 2x2x2", opt, what);
    return FD_OK;
}

int opt_ckpt_take(opt_ckpt *c, int code, const char *val, fd_status *st)
{
    *st = FD_OK;
    if (code == OPT_CKPT_SECONDS) *st = opt_f64("--checkpoint-seconds", val, 0, 1e9, &c->seconds);
    else if (code == OPT_CKPT_RESUME) c->resume_dir = val;
    else return 0;
    return 1;
}

fd_status opt_ckpt_finish(const opt_ckpt *c, const char **outdir, int *resume)
{
    *resume = c->resume_dir != NULL;
    if (!c->resume_dir) return FD_OK;
    if (*outdir && strcmp(*outdir, c->resume_dir) != 0)
        return fd_fail(FD_ERR_USAGE, "-o %s and --resume %s name different directories; --resume DIR alone is enough",
                       *outdir, c->resume_dir);
    if (!(c->seconds > 0))
        return fd_fail(FD_ERR_USAGE, "--resume needs checkpoints: drop --checkpoint-seconds 0");
    *outdir = c->resume_dir;
    return FD_OK;
}
