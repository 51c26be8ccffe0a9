/* SPDX-License-Identifier: BSD-3-Clause */
/* Where a matrix reader's rows go (matrix_read.h): the sink a workload
 * gives, and the threads the readers transform rows on.  Shared by the
 * text reader (matrix_text.c) and the binary ones (matrix_bin.c). */
#ifndef FD_IO_MATRIX_SINK_H
#define FD_IO_MATRIX_SINK_H

#include "../common/sha256.h"
#include "../common/status.h"

#include <stddef.h>
#include <stdint.h>

enum { FD_HEADER_AUTO = 0, FD_HEADER_YES = 1, FD_HEADER_NO = 2 };

/* What a reader does with a row holding a NaN or infinite value (the
 * readers' drop_nan argument): refuse the file; drop the row (the sink's
 * drop); or keep NaN as a value (missing, for the sink to handle), still
 * refusing infinities. */
enum { FD_NAN_REFUSE = 0, FD_NAN_DROP_ROW = 1, FD_NAN_KEEP = 2 };

typedef struct fd_matrix_sink {
    void *ctx;
    /* Bytes of one transformed row of n values. */
    size_t (*row_bytes)(uint32_t n);
    /* Any thread: row x of n finite values into out (row_bytes(n) bytes).
     * ints: the same row as non-negative integers when it was written as
     * such (x is then NULL); scratch: n doubles of room. */
    void (*transform)(const double *x, const uint64_t *ints, uint32_t n, void *out, double *scratch);
    /* The calling thread only, in this order: begin once the row length is
     * known (rows_hint: an estimate of the rows, 0 when none), then push
     * or drop per row (input_row counts dropped rows too), then finish
     * with the SHA-256 of the input file: done (text, hashed as it is
     * parsed) or still being computed (.npy and HDF5, sha256_file_start).
     * A sink that keeps the hash for later moves *sha into its own storage
     * (and clears sha->job); a job left in *sha is stopped when finish
     * returns. */
    fd_status (*begin)(void *ctx, uint32_t n, uint64_t rows_hint);
    fd_status (*push)(void *ctx, const void *row, uint64_t input_row);
    fd_status (*drop)(void *ctx);
    fd_status (*finish)(void *ctx, sha256_future *sha);
    /* Appended to the message that refuses a NaN or infinite value, e.g.
     * " (--drop-nan-rows skips such rows)"; NULL: nothing. */
    const char *nan_hint;
    /* Threads to transform rows on: the rank's share of the cores
     * (fd_place_threads, or --threads), so that the ranks of a node do not
     * each take the whole machine; 0: the machine's CPUs.  At most
     * FD_MATRIX_MAX_THREADS either way. */
    int threads;
    /* Optional (both or neither): a sink whose rows have fixed places.
     * The binary readers, whose row count is known (.npy, HDF5), then call
     * place_begin with it once after begin, and place for each row from
     * the worker thread that transformed it (slot: its input row; any
     * thread, distinct slots, every row once) instead of push from the
     * calling thread: that in-order hand-over bounded reading a .npy on 16
     * cores.  Not with drop_nan (rows would move up), nor for text. */
    fd_status (*place_begin)(void *ctx, uint64_t rows);
    void (*place)(void *ctx, const void *row, uint64_t slot);
    /* Optional: a sink that keeps the values as read (its transform a
     * copy of doubles): where all `rows` rows of doubles go, one after the
     * other, after begin, so that a float64 .npy is read straight there
     * (rawread.h) instead of row by row; NULL from it: out of memory (it
     * has said so).  Not with drop_nan, nor for text. */
    double *(*values_at)(void *ctx, uint64_t rows);
    /* Text and CSV: whether the first non-blank line is a header of
     * column names (docs/formats.md, "Matrices"): FD_HEADER_AUTO (0) when
     * none of its fields is a number and none is empty, FD_HEADER_YES,
     * FD_HEADER_NO. */
    int header;
    /* Optional names, text and CSV only.  name_column: the first field of
     * every line (the header's too) is the row's name, not a value;
     * row_name is then called on the calling thread with each data row's
     * name before its push or drop (input_row as theirs).  column_names:
     * called once, after begin, with the header's fields (less the name
     * column's) when the file has a header of as many fields as values. */
    int name_column;
    fd_status (*row_name)(void *ctx, uint64_t input_row, const char *name, size_t len);
    fd_status (*column_names)(void *ctx, const char *const *names, uint32_t n);
} fd_matrix_sink;

/* Threads a binary reader (.npy, HDF5) transforms rows on: `want` (0: the
 * machine's CPUs), at most 16: with its rows placed by the workers of one
 * team, 16 loaded a .npy of 9,879,896 x 30 in 0.50 s against 0.62 s with
 * 8 (bench/read-spearman.sh --load, 16 cores; spearman-read.csv).  The
 * text reader keeps at most 8 (FD_TEXT_MAX_THREADS): it hands its rows
 * over in order on the main thread, which hashes them too, and holds 3 x T
 * chunks of 8 MiB; more were not measured. */
#define FD_MATRIX_MAX_THREADS 16
#define FD_TEXT_MAX_THREADS 8
int fd_matrix_threads(int want);

#endif
