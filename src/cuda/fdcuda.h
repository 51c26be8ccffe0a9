/* SPDX-License-Identifier: BSD-3-Clause */
/* Plain C interface of the CUDA kernels (the .cu files of src/cuda).  No CUDA header
 * leaks through it: host code that includes it builds without nvcc.
 * Every function returns an fd_status; CUDA failures are FD_ERR_CUDA with
 * the failing call and its source line. */
#ifndef FD_CUDA_H
#define FD_CUDA_H

#include "../common/status.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Number of usable CUDA devices (0 when there is no driver or device). */
int fd_cuda_device_count(void);
/* Whether this node may have a usable device, without starting the
 * driver (its device node, CUDA_VISIBLE_DEVICES): 0 rules it out. */
int fd_cuda_present(void);

/* Makes `device` current and creates its context (the costly first step
 * of any CUDA program, about a quarter second). */
fd_status fd_cuda_open(int device);
/* fd_cuda_open on a thread that wants the context made early, beside other
 * work, and reports nothing: failures are dropped here and said by the
 * fd_cuda_open that follows (CUDA's current device is per thread, so the
 * thread that drives the device calls that one anyway). */
void fd_cuda_warm(int device);
/* Ends `device`'s context (cudaDeviceReset), reporting nothing: for a
 * thread of its own once every device buffer is freed, so that the
 * driver's release of the device (0.1 s on an H100 or H200) runs beside
 * the writing of the output rather than as the process ends. */
void fd_cuda_release(int device);
/* Copies `bytes` of pageable host memory at src to the device at dst,
 * through a small ring of pinned buffers that a few host threads fill
 * while the copy engine drains them (upload.cu); FD_GPU_UPLOAD=pageable:
 * a plain cudaMemcpy.  Returns when the bytes are on the device. */
fd_status fd_cuda_upload(void *dst, const void *src, uint64_t bytes);
/* The same on a thread of its own, on `device`, while the caller goes on
 * (bcp's warm-up); finish waits for it and returns its status (FD_OK for
 * NULL).  Every start needs its finish, failures included, before dst or
 * src is freed. */
typedef struct fd_upload fd_upload;
fd_status fd_cuda_upload_start(fd_upload **u, int device, void *dst, const void *src, uint64_t bytes);
fd_status fd_cuda_upload_finish(fd_upload **u);
/* With FD_GPU_VERBOSE set: "gpu: WHAT in X ms" since t0 (fd_now()) on
 * stderr, for a device engine's setup steps. */
void fd_cuda_say_time(const char *what, double t0);

/* What the user can change when the GPU runs out of memory ("set
 * FD_GPU_CHUNK lower", "use --backend cpu"): the workload's backend says
 * it before it allocates, and every out-of-GPU-memory error ends with it.
 * FD_GPU_MEM_LIMIT=BYTES (a test hook) fails every single device
 * allocation larger than BYTES as the device would, so that the message
 * can be tested on any GPU. */
void fd_cuda_set_oom_hint(const char *hint);

/* Transposes a bit matrix on the GPU: `in` has `rows` rows of `in_words`
 * 64-bit words (bit c of row r is column c), `out` gets `cols` rows of
 * `out_words` words with bit r of row c set iff in(r, c).  Host pointers;
 * the copies to and from the device are part of the call.  This is the
 * object-rows to attribute-columns step of a context on the GPU. */
fd_status fd_cuda_bit_transpose(const uint64_t *in, uint32_t rows, uint32_t cols, uint32_t in_words,
                                uint64_t *out, uint32_t out_words);

#ifdef __cplusplus
}
#endif

#endif
