/* Numbers from the environment: the tuning and test knobs
 * (docs/performance.md lists them).  A knob set to anything but what it
 * takes is a usage error that names it, never a silent default. */
#ifndef FD_ENV_H
#define FD_ENV_H

#include "status.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* *out = the whole number in [lo, hi] that variable `name` holds, or dflt
 * when it is unset.  Empty, signed, partly numeric, out-of-range or
 * overflowing values are refused (FD_ERR_USAGE); `what` names the unit
 * for the message ("column tiles"). */
fd_status fd_env_count(const char *name, uint64_t lo, uint64_t hi, uint64_t dflt, const char *what, uint64_t *out);

#ifdef __cplusplus
}
#endif

#endif
