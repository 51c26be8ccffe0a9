/* SPDX-License-Identifier: BSD-3-Clause */
/* The matrix reader by the name's form (see matrix_read.h). */
#include "matrix_read.h"

#include "matrix_bin.h"
#include "matrix_text.h"

#include <string.h>
#include <strings.h>

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcasecmp(s + a - b, suf);
}

fd_status fd_matrix_read(const char *spec, int drop_nan, const fd_matrix_sink *sink)
{
    const int binary = strstr(spec, ".h5:") || strstr(spec, ".hdf5:") || ends_with(spec, ".npy");
    if (binary && sink->name_column)
        return fd_fail(FD_ERR_USAGE, "%s: a binary matrix has no name column (names come from text and CSV)", spec);
    if (strstr(spec, ".h5:") || strstr(spec, ".hdf5:")) {
        if (!strstr(spec, ".h5:")) return fd_fail(FD_ERR_USAGE, "%s: name HDF5 inputs FILE.h5:/dataset", spec);
        return fd_matrix_read_h5(spec, drop_nan, sink);
    }
    if (ends_with(spec, ".npy")) return fd_matrix_read_npy(spec, drop_nan, sink);
    return fd_matrix_read_text(spec, ends_with(spec, ".csv"), drop_nan, sink);
}
