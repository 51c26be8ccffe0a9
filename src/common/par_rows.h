/* SPDX-License-Identifier: BSD-3-Clause */
/* A pass over rows on T threads: the rows go out in chunks (64 by
 * default) from an atomic cursor, so that threads even out; the first
 * failure stops the others taking more.  Shared by dpc's passes and bcp's
 * products, which run on one team kept for the process (par_rows.c);
 * a team of one's own (below) feeds spearman's --top-k heaps on the GPU
 * backend. */
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

/* A team of T threads (the caller and T - 1 that wait between passes), for
 * many short passes: starting threads for each would cost more than the
 * pass (some 20 us a thread, one after the other).  One caller at a time. */
typedef struct par_team par_team;
fd_status par_team_create(par_team **out, int T);
void par_team_destroy(par_team **team);
int par_team_size(const par_team *team);
/* par_rows_chunk on the team's threads (no progress; pass: counting the
 * rows in prog). */
fd_status par_team_rows(par_team *team, uint64_t i0, uint64_t i1, uint64_t chunk, row_fn fn, void *ctx);
fd_status par_team_pass(par_team *team, uint64_t i0, uint64_t i1, uint64_t chunk, row_fn fn, void *ctx,
                        fd_progress *prog);
/* The same in two steps, for a caller with work of its own meanwhile (a
 * reader's next batch): start hands the pass to the team's other threads
 * and returns at once; finish joins the caller to what is left of it and
 * waits for the end.  Exactly one finish after each start, before the
 * next pass.  A team of one does the whole pass in finish. */
void par_team_start(par_team *team, uint64_t i0, uint64_t i1, uint64_t chunk, row_fn fn, void *ctx);
fd_status par_team_finish(par_team *team);

#endif
