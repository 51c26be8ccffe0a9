/* Fuzz target: the numeric-matrix readers of spearman and dpc: text
 * (whitespace), CSV (optional header), and NumPy .npy.  The first byte
 * picks the format, whether NaN rows are dropped, and whether the sink
 * takes rows by place (spearman's) or by push (dpc's), and whether the
 * first field of each line is a name (--row-names); the rest is the
 * file.  The sink checks what the reader promises: every row has the
 * length begin announced, its values are finite, and a placed row's slot
 * is below the count place_begin gave, each slot once, all of them when
 * the read succeeds. */
#include "fuzz_file.h"
#include "io/matrix_read.h"

#include <math.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static uint32_t cols;
static uint64_t placed_rows;
static atomic_uchar *placed;

static size_t row_bytes(uint32_t n) { return n * sizeof(double); }

/* FD_NAN_KEEP for this input: NaN may come through, an infinity never. */
static int keep_nan;

static void transform(const double *x, const uint64_t *ints, uint32_t n, void *out, double *scratch)
{
    (void)scratch;
    double *o = out;
    for (uint32_t j = 0; j < n; j++) {
        o[j] = x ? x[j] : (double)ints[j];
        /* the reader lets only finite values through (and NaN when kept) */
        if (keep_nan ? isinf(o[j]) : !isfinite(o[j])) abort();
    }
}

static fd_status begin(void *ctx, uint32_t n, uint64_t rows_hint)
{
    (void)ctx, (void)rows_hint;
    if (n == 0) abort();
    cols = n;
    return FD_OK;
}

static fd_status place_begin(void *ctx, uint64_t rows)
{
    (void)ctx;
    if (placed) abort(); /* once */
    placed_rows = rows;
    placed = calloc(rows ? rows : 1, 1);
    return placed ? FD_OK : fd_fail(FD_ERR_NOMEM, "out of memory");
}

static void place(void *ctx, const void *row, uint64_t slot)
{
    (void)ctx, (void)row;
    if (!placed || slot >= placed_rows || atomic_exchange(&placed[slot], 1)) abort();
}

static fd_status push(void *ctx, const void *row, uint64_t input_row)
{
    (void)ctx, (void)input_row;
    volatile double s = 0;
    for (uint32_t j = 0; j < cols; j++) s += ((const double *)row)[j]; /* every value readable */
    return FD_OK;
}

static fd_status drop(void *ctx)
{
    (void)ctx;
    return FD_OK;
}

/* A sink that takes the values as read (a float64 .npy straight into
 * them): each must pass the reader's check once it says yes. */
static double *values;
static uint64_t values_n;
static double *values_at(void *ctx, uint64_t rows)
{
    (void)ctx;
    if (values) abort(); /* once */
    values_n = rows * cols;
    values = malloc((values_n ? values_n : 1) * sizeof *values);
    if (!values) fd_fail(FD_ERR_NOMEM, "out of memory");
    return values;
}

/* Names come in order, one per row, each a string of the length given. */
static uint64_t named;
static fd_status row_name(void *ctx, uint64_t input_row, const char *name, size_t len)
{
    (void)ctx;
    if (input_row != named++ || strlen(name) != len) abort();
    return FD_OK;
}

static fd_status column_names(void *ctx, const char *const *names, uint32_t n)
{
    (void)ctx;
    if (n != cols) abort(); /* only a header as wide as the rows */
    for (uint32_t k = 0; k < n; k++)
        if (!names[k]) abort();
    return FD_OK;
}

static fd_status finish(void *ctx, sha256_future *sha)
{
    (void)ctx, (void)sha; /* a hash still running is stopped by the reader */
    return FD_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *ext[] = {".txt", ".csv", ".npy"};
    if (size < 1) return 0;
    const int k = data[0] % 3, drop_nan = (data[0] / 3) & 1, by_place = (data[0] / 6) & 1;
    const int names = (data[0] / 12) & 1;
    keep_nan = (data[0] / 24) & 1;
    const int direct = (data[0] / 48) & 1;
    const char *path = fuzz_file(data + 1, size - 1, ext[k]);
    named = 0;
    const fd_matrix_sink sink = {.row_bytes = row_bytes,
                                 .transform = transform,
                                 .begin = begin,
                                 .push = push,
                                 .drop = drop,
                                 .finish = finish,
                                 .place_begin = by_place && !names ? place_begin : NULL,
                                 .place = by_place && !names ? place : NULL,
                                 .values_at = direct && !names ? values_at : NULL,
                                 .name_column = names,
                                 .row_name = row_name,
                                 .column_names = column_names};
    const fd_status st = fd_matrix_read(path, keep_nan ? FD_NAN_KEEP : drop_nan, &sink);
    for (uint64_t r = 0; st == FD_OK && placed && r < placed_rows; r++)
        if (!placed[r]) abort(); /* a read that succeeds placed every row */
    for (uint64_t i = 0; st == FD_OK && values && i < values_n; i++)
        if (keep_nan ? isinf(values[i]) : !isfinite(values[i])) abort();
    free(values);
    values = NULL;
    fd_errclear();
    free(placed);
    placed = NULL;
    unlink(path);
    return 0;
}
