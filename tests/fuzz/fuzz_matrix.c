/* Fuzz target: the numeric-matrix readers of spearman and dpc: text
 * (whitespace), CSV (optional header), and NumPy .npy.  The first byte
 * picks the format and whether NaN rows are dropped; the rest is the file.
 * The sink checks what the reader promises: every row has the length
 * begin announced, and its values are finite. */
#include "fuzz_file.h"
#include "io/matrix_read.h"

#include <math.h>

static uint32_t cols;

static size_t row_bytes(uint32_t n) { return n * sizeof(double); }

static void transform(const double *x, const uint64_t *ints, uint32_t n, void *out, double *scratch)
{
    (void)scratch;
    double *o = out;
    for (uint32_t j = 0; j < n; j++) {
        o[j] = x ? x[j] : (double)ints[j];
        if (!isfinite(o[j])) abort(); /* the reader lets only finite values through */
    }
}

static fd_status begin(void *ctx, uint32_t n, uint64_t rows_hint)
{
    (void)ctx, (void)rows_hint;
    if (n == 0) abort();
    cols = n;
    return FD_OK;
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

static void finish(void *ctx, const char sha256[65])
{
    (void)ctx, (void)sha256;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *ext[] = {".txt", ".csv", ".npy"};
    if (size < 1) return 0;
    const int k = data[0] % 3, drop_nan = (data[0] / 3) & 1;
    const char *path = fuzz_file(data + 1, size - 1, ext[k]);
    const fd_matrix_sink sink = {NULL, row_bytes, transform, begin, push, drop, finish, NULL};
    (void)fd_matrix_read(path, drop_nan, &sink);
    unlink(path);
    return 0;
}
