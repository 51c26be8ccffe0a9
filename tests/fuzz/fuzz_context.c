/* Fuzz target: the formal-context readers (Burmeister .cxt, FIMI .dat,
 * 0/1 CSV and TSV).  The first byte picks the format, the rest is the
 * file.  A reader must return a context or an error, never crash, leak or
 * read out of bounds. */
#include "fuzz_file.h"
#include "lattice/context.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct {
        const char *ext;
        ctx_format fmt;
    } kinds[] = {{".cxt", CTX_FMT_CXT}, {".dat", CTX_FMT_FIMI}, {".csv", CTX_FMT_CSV}, {".tsv", CTX_FMT_TSV}};
    if (size < 1) return 0;
    const int k = data[0] % 4;
    const char *path = fuzz_file(data + 1, size - 1, kinds[k].ext);
    fca_context *ctx = NULL;
    if (fca_context_read(&ctx, path, kinds[k].fmt) == FD_OK) fca_context_destroy(&ctx);
    unlink(path);
    return 0;
}
