/* The GPU bit transpose against the obvious CPU loop, on random matrices
 * of several shapes (ragged edges included).  Exit 77 (skipped) when the
 * machine has no GPU. */
#include "common/bitset.h"
#include "common/clock.h"
#include "cuda/fdcuda.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

int main(void)
{
    if (fd_cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    static const uint32_t shapes[][2] = {{1, 1}, {63, 65}, {64, 64}, {200, 7}, {1000, 130}, {8124, 119}, {4097, 1000}};
    fd_rng r = {3};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        uint32_t rows = shapes[s][0], cols = shapes[s][1];
        uint32_t iw = bs_words(cols), ow = bs_words(rows);
        fd_word *in = calloc((size_t)rows * iw, 8), *out = calloc((size_t)cols * ow, 8), *ref = calloc((size_t)cols * ow, 8);
        for (uint32_t i = 0; i < rows; i++)
            for (uint32_t c = 0; c < cols; c++)
                if (fd_rng_unif(&r) < 0.3) bs_set(in + (size_t)i * iw, c);
        for (uint32_t i = 0; i < rows; i++)
            for (uint32_t c = 0; c < cols; c++)
                if (bs_test(in + (size_t)i * iw, c)) bs_set(ref + (size_t)c * ow, i);
        memset(out, 0xa5, (size_t)cols * ow * 8); /* poison: every word must be written */
        fd_status st = fd_cuda_bit_transpose(in, rows, cols, iw, out, ow);
        CHECK(st == FD_OK, "%u x %u: %s", rows, cols, fd_errmsg());
        CHECK(!memcmp(out, ref, (size_t)cols * ow * 8), "%u x %u: transpose differs from the CPU", rows, cols);
        free(in);
        free(out);
        free(ref);
    }
    return t_report();
}
