/* SPDX-License-Identifier: BSD-3-Clause */
/* Thin checked helpers over serial HDF5: appendable 1-D datasets, scalar
 * attributes, string arrays.  Every HDF5 call is checked; a failure is
 * FD_ERR_HDF5 with the source line of the call that failed.  HDF5's own
 * error stack printing is switched off by h5u_init(), so users see one
 * message, ours. */
#ifndef FD_H5UTIL_H
#define FD_H5UTIL_H

#include "../common/status.h"

#include <errno.h>
#include <hdf5.h>
#include <stdint.h>
#include <string.h>

/* errno is cleared before the call, so that what the file driver's
 * write or open left there (a full disk, `ulimit -f`, no permission) is
 * the reason the message gives. */
#define H5_CHECK_GOTO(call, st, label)                                        \
    do {                                                                      \
        errno = 0;                                                            \
        if ((call) < 0) {                                                     \
            const int h5_errno_ = errno;                                      \
            (st) = fd_fail_at(FD_ERR_HDF5, __FILE__, __LINE__,                \
                              "HDF5 call failed: %s%s%s", #call,              \
                              h5_errno_ ? ": " : "",                          \
                              h5_errno_ ? strerror(h5_errno_) : "");          \
            goto label;                                                       \
        }                                                                     \
    } while (0)

/* Before any other HDF5 call: leaves closing the library to main (H5close
 * after a success).  It does not start HDF5. */
void h5u_init(void);
/* HDF5 in use from here: starts the library (its first call does, about
 * 2.5 MB of its own memory, a thirteenth of a text-only lattice run's
 * peak on sparse data) with its automatic error printing off on the
 * calling thread, so users see one message, ours.  main calls it for
 * every command but those that start HDF5 only when they use it (lattice:
 * its inputs are text, and the job skeleton calls it for an output
 * directory).  Idempotent. */
void h5u_start(void);
/* HDF5's error printing off for the calling thread, once HDF5 is in use
 * (h5u_start); a thread that starts before it must not call HDF5.  A
 * thread-safe HDF5 keeps the setting per thread, and printed its whole
 * error stack from a writer thread under mpirun: every thread that may
 * call HDF5 calls this first. */
void h5u_quiet(void);

/* *dcpl: a dataset creation property list of chunks of `chunk`, with
 * HDF5's Fletcher-32 checksum unless FD_H5_CHECKSUM=off; the caller
 * closes it.  Every dataset of a result or checkpoint file with data is
 * made so (h5u_app_create, h5u_write_1d, bcp's factors). */
fd_status h5u_chunked_dcpl(hid_t *dcpl, int rank, const hsize_t *chunk);

/* A 1-D chunked dataset that grows as data is appended. */
typedef struct {
    hid_t ds;
    hid_t memtype;
    uint64_t n;
    int narrow;   /* uint32 in memory, 16-bit unsigned in the file: narrowed by h5u_app_append */
    uint16_t *buf; /* the narrowed values, kept from one append to the next */
    uint64_t buf_cap;
} h5u_app;

fd_status h5u_app_create(h5u_app *a, hid_t loc, const char *name, hid_t filetype, hid_t memtype, uint64_t chunk);
/* Renames the committed file `from` to tmp and opens it for writing, so
 * that a writer continues it instead of copying it (the largest
 * checkpoint segment becomes a part so); removes the datasets and
 * attributes (NULL-terminated lists) that made it what it was.  On
 * failure *f is the open file or -1, and tmp exists once the rename
 * succeeded. */
fd_status h5u_take_over(const char *from, const char *tmp, const char *const *dsets, const char *const *attrs,
                        hid_t *f);
/* An existing appendable dataset, to append to (a file taken over). */
fd_status h5u_app_open(h5u_app *a, hid_t loc, const char *name, hid_t memtype);
fd_status h5u_app_append(h5u_app *a, const void *data, uint64_t n);
fd_status h5u_app_close(h5u_app *a);
/* Adds delta to every element of an appendable uint64 dataset, in slices
 * (partitioned outputs turn local offsets into global ones this way). */
fd_status h5u_app_add(h5u_app *a, uint64_t delta);

/* Finishes a result file written under the temporary name tmp: writes
 * the attribute complete = 1, closes f (always) and renames tmp to path,
 * so that a file at path is always whole.  The caller removes tmp on
 * failure. */
fd_status h5u_commit(hid_t f, const char *tmp, const char *path);

/* A result file that is written over time under its temporary name
 * (fd_tmp_name) and renamed into place whole by h5u_out_commit;
 * h5u_out_abort closes it and removes the temporary.  file is -1 while
 * nothing is open; a zeroed h5u_out with file = -1 may be aborted. */
typedef struct {
    hid_t file;
    char *path, *tmp;
    struct fd_writeback *writeback; /* replacing a file: fd_writeback_start */
} h5u_out;
#define H5U_OUT_NONE {-1, NULL, NULL, NULL}

/* A new, empty file for path. */
fd_status h5u_out_create(h5u_out *o, const char *path);
/* The same, for a file that ends up in place of replaces (a checkpoint
 * segment that becomes the result): when a file is there, this one's
 * writeback starts while it is written (common/writeback.h); NULL: none. */
fd_status h5u_out_create_for(h5u_out *o, const char *path, const char *replaces);
/* The committed file from, taken over (h5u_take_over) as the file for
 * path. */
fd_status h5u_out_adopt(h5u_out *o, const char *path, const char *from, const char *const *dsets,
                        const char *const *attrs);
/* h5u_commit: complete = 1, closed, renamed to path. */
fd_status h5u_out_commit(h5u_out *o);
void h5u_out_abort(h5u_out *o);

/* One piece of a concatenation: elements [start, start+count) of the 1-D
 * dataset dset (src_len elements) in file, a path relative to the
 * directory of the file being written. */
typedef struct {
    const char *file, *dset;
    uint64_t src_len, start, count;
} h5u_piece;
/* A 1-D virtual dataset (HDF5 VDS) that reads as the pieces, in order. */
fd_status h5u_concat(hid_t loc, const char *name, hid_t filetype, const h5u_piece *pc, size_t n);

fd_status h5u_attr_str(hid_t loc, const char *name, const char *v);
fd_status h5u_attr_u64(hid_t loc, const char *name, uint64_t v);
fd_status h5u_attr_f64(hid_t loc, const char *name, double v);
/* A 1-D dataset of n values, or of variable-length UTF-8 strings. */
fd_status h5u_write_1d(hid_t loc, const char *name, hid_t filetype, hid_t memtype, const void *v, uint64_t n);
fd_status h5u_write_strings(hid_t loc, const char *name, char *const *s, uint64_t n);
/* Every dataset made from now on deflated at level (1..9; 0: not), with
 * the shuffle filter before it (--compress). */
void h5u_set_deflate(int level);
/* Threads for the checksums of h5u_write_1d's chunks (the job's). */
void h5u_set_threads(int threads);
/* HDF5's Fletcher-32 of len bytes (the value its filter appends to a
 * chunk, little-endian), computed in a form the compiler vectorises. */
uint32_t h5u_fletcher32(const void *data, size_t len);
#define H5U_COMPRESS_LEVEL 4
/* A 1-D dataset of n fixed-length strings (what h5u_write_strings
 * writes) as n strdup'ed strings in *out; anything else (another length,
 * type or width over 64 KiB) is FD_ERR_INPUT naming path. */
fd_status h5u_read_strings(hid_t loc, const char *path, const char *name, uint64_t n, char ***out);

/* Attribute readers: FD_ERR_INPUT when absent or of the wrong kind. */
fd_status h5u_read_attr_str(hid_t loc, const char *name, char *buf, size_t cap);
fd_status h5u_read_attr_u64(hid_t loc, const char *name, uint64_t *v);
fd_status h5u_read_attr_f64(hid_t loc, const char *name, double *v);
/* Length of a 1-D dataset. */
fd_status h5u_len(hid_t loc, const char *name, uint64_t *n);
/* Reads elements [start, start+n) of a 1-D dataset as memtype; a dataset
 * that is missing, not 1-D or shorter is FD_ERR_INPUT. */
fd_status h5u_read_range(hid_t loc, const char *name, hid_t memtype, uint64_t start, uint64_t n, void *out);

/* Readers of result files, which may be damaged or edited: every size
 * they use comes from a dataset's own shape or is checked against it.
 * h5u_shape: the dimensions of a dataset of at most maxdims.
 * h5u_expect_len: FD_ERR_INPUT unless the 1-D dataset has `want` entries
 * (why: what says so, for the message).
 * h5u_expect_complete: the file's format attribute is `format`, its
 * complete attribute 1, its format_version (if any) at most max_version.
 * h5u_read_u64_attr: an attribute that must be there, the message naming
 * the file. */
fd_status h5u_shape(hid_t loc, const char *name, int maxdims, int *ndims, uint64_t *dims);
fd_status h5u_expect_len(hid_t loc, const char *path, const char *name, uint64_t want, const char *why);
fd_status h5u_expect_complete(hid_t f, const char *path, const char *format, uint64_t max_version);
fd_status h5u_read_u64_attr(hid_t f, const char *path, const char *name, uint64_t *v);

#endif
