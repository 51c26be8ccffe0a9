/* The fuzz targets' one helper: the parsers read files, so each input is
 * written to a file of its own (on tmpfs where there is one) with the
 * extension that picks the format. */
#ifndef FD_FUZZ_FILE_H
#define FD_FUZZ_FILE_H

#include "common/status.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *fuzz_file(const uint8_t *data, size_t size, const char *ext)
{
    static char path[256];
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(path, sizeof path, "%s/fcbo-fuzz-%ld%s", dir, (long)getpid(), ext);
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) abort();
    fd_errclear(); /* only the first failure is recorded otherwise */
    return path;
}

#endif
