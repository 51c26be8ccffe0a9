/* A pass over rows on T threads: the rows go out in chunks (64 by
 * default) from an atomic cursor, so that threads even out; the first
 * failure stops the others taking more.  Shared by dpc's passes and bcp's
 * products. */
#ifndef FD_PAR_ROWS_H
#define FD_PAR_ROWS_H

#include "progress.h"
#include "status.h"

#include <stdint.h>

/* Rows [i0, i1) of one chunk, on thread `thread` (0 .. T-1). */
typedef fd_status (*row_fn)(void *ctx, uint64_t i0, uint64_t i1, int thread);

/* fn over [i0, i1) on T threads (thread 0 is the caller), counting the
 * rows done in prog (or not, when NULL).  A thread that cannot start
 * leaves its rows to the others. */
fd_status par_rows(int T, uint64_t i0, uint64_t i1, row_fn fn, void *ctx, fd_progress *prog);
/* The same with chunks of `chunk` rows (few rows of much work each). */
fd_status par_rows_chunk(int T, uint64_t i0, uint64_t i1, uint64_t chunk, row_fn fn, void *ctx, fd_progress *prog);

#endif
