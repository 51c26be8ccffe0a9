/* SPDX-License-Identifier: BSD-3-Clause */
#include "matrix_sink.h"

#include <unistd.h>

int fd_matrix_threads(int want)
{
    const long n = want > 0 ? want : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > FD_MATRIX_MAX_THREADS ? FD_MATRIX_MAX_THREADS : (int)n;
}
