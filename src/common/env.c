#include "env.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

fd_status fd_env_count(const char *name, uint64_t lo, uint64_t hi, uint64_t dflt, const char *what, uint64_t *out)
{
    const char *v = getenv(name);
    *out = dflt;
    if (!v) return FD_OK;
    char *end;
    errno = 0;
    /* strtoull takes leading blanks and a minus sign (wrapping around):
     * only digits count as a number here. */
    const unsigned long long n = isdigit((unsigned char)v[0]) ? strtoull(v, &end, 10) : 0;
    if (!isdigit((unsigned char)v[0]) || *end || errno || n < lo || n > hi) {
        if (hi == UINT64_MAX)
            return fd_fail(FD_ERR_USAGE, "%s=%s: expected a number of %s, at least %llu", name, v, what,
                           (unsigned long long)lo);
        return fd_fail(FD_ERR_USAGE, "%s=%s: expected a number of %s from %llu to %llu", name, v, what,
                       (unsigned long long)lo, (unsigned long long)hi);
    }
    *out = n;
    return FD_OK;
}
