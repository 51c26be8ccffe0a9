/* Fuzz target: bcp's N-way .npy reader, whole and by blocks, and with
 * missing entries.  The first byte picks whole or a block (the first half
 * of every mode), or (bit 1) the reader of missing entries with the file
 * as its own mask too; the rest is the file.  The reader must return the
 * tensor or an error; every value it returns must be finite, and 0 where
 * it marks an entry missing. */
#include "bcp/tensor.h"
#include "fuzz_file.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    const int block = data[0] & 1, missing = data[0] & 2;
    const char *path = fuzz_file(data + 1, size - 1, ".npy");
    uint32_t order = 0;
    uint64_t dims[BCP_MAX_ORDER], lo[BCP_MAX_ORDER] = {0}, cnt[BCP_MAX_ORDER];
    bcp_tensor *t = NULL;
    if (missing) {
        if (bcp_tensor_read_missing(&t, path, (data[0] & 4) ? path : NULL, NULL, NULL, 1, 1 + (data[0] & 1)) ==
            FD_OK) {
            if (t->n_observed == 0 || t->n_observed > t->size) abort();
            for (uint64_t i = 0; i < t->size; i++)
                if (!isfinite(t->x[i]) || (t->observed && !t->observed[i] && t->x[i] != 0)) abort();
            bcp_tensor_destroy(&t);
        }
    } else if (bcp_tensor_shape(path, &order, dims) == FD_OK) {
        if (order < 1 || order > BCP_MAX_ORDER) abort();
        for (uint32_t n = 0; n < order; n++) cnt[n] = dims[n] > 1 ? dims[n] / 2 : dims[n];
        if (bcp_tensor_read(&t, path, block ? lo : NULL, block ? cnt : NULL, 1, 1 + (data[0] & 1)) == FD_OK) {
            for (uint64_t i = 0; i < t->size; i++)
                if (!isfinite(t->x[i])) abort();
            bcp_tensor_destroy(&t);
        }
    }
    unlink(path);
    return 0;
}
