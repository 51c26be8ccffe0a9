/* SPDX-License-Identifier: BSD-3-Clause */
/* The writeback of a file started while it is still being written, by a
 * thread of its own, for a file that will be renamed over an existing
 * one.
 *
 * Why: ext4 (mount option auto_da_alloc, the default) starts the
 * writeback of all of a file's dirty pages inside the rename(2) that
 * replaces an existing file, so that a crash leaves the old file or the
 * whole new one.  For dpc.h5 of 10^7 points (368 MB) that rename took
 * 0.16-0.31 s on the dev VM, most of the output phase; into a new
 * directory it took nothing.  Submitting the pages as they are written
 * leaves the rename little to do and keeps ext4's ordering: the rename
 * still commits after the data.  Nothing waits for the disk here.
 *
 * One thread serves every such file of the process: started with the
 * first, it stays, idle, until the process ends. */
#ifndef FD_WRITEBACK_H
#define FD_WRITEBACK_H

typedef struct fd_writeback fd_writeback;

/* Hands the file at tmp (opened again, read-only, without following a
 * link) to the thread when a file exists at final (a replacement) and
 * FD_WRITEBACK is not off; NULL otherwise, or when anything fails (the
 * rename then does the work, as before).  Thread-safe. */
fd_writeback *fd_writeback_start(const char *tmp, const char *final);

/* Takes the file from the thread, which no longer touches it when this
 * returns (call it before tmp is renamed or removed), and closes our
 * descriptor; NULL is a no-op.  Thread-safe. */
void fd_writeback_stop(fd_writeback *w);

#endif
