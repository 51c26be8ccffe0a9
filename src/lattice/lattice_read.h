/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading a lattice result (a single file or a master over its parts):
 * `fcbo-dist info` and the --text of a distributed run. */
#ifndef FD_LATTICE_READ_H
#define FD_LATTICE_READ_H

#include "../common/status.h"

#include <hdf5.h>
#include <stdio.h>

/* Opens a lattice file for reading after checking it (lattice_master_check
 * for a master; every size against the datasets' own): a damaged or
 * edited file is FD_ERR_INPUT naming it. */
fd_status lattice_read_open(const char *path, hid_t *f);
/* Prints a summary of a lattice file (fcbo-dist info). */
fd_status lattice_read_info(const char *path, FILE *out);
/* Streams the intents of a lattice file as text, one per line. */
fd_status lattice_read_text(const char *path, FILE *out);
/* The same with the attributes' names (/attributes/names) instead of
 * their ids, separated by tabs (names may hold blanks). */
fd_status lattice_read_text_names(const char *path, FILE *out);


#endif
