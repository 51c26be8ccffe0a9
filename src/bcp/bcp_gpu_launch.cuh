/* SPDX-License-Identifier: BSD-3-Clause */
/* What both bcp engines (bcp_gpu.cu, dense; bcp_masked_gpu.cu, with
 * missing entries) size their launches and unfoldings by. */
#ifndef FD_BCP_GPU_LAUNCH_CUH
#define FD_BCP_GPU_LAUNCH_CUH

#include <stdint.h>

#define THREADS 256

/* Blocks of THREADS for n elements, one thread each. */
static inline unsigned blocks_for(uint64_t n) { return (unsigned)((n + THREADS - 1) / THREADS); }

/* The product of dims[a..b): the rows of modes a to b-1 unfolded together. */
static inline uint64_t dims_span(const uint64_t *dims, uint32_t a, uint32_t b)
{
    uint64_t p = 1;
    for (uint32_t m = a; m < b; m++) p *= dims[m];
    return p;
}

#endif
