#include "outdir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

fd_status fd_outdir_prepare(const char *dir, int force, int *created)
{
    struct stat sb;
    *created = 0;
    if (stat(dir, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode)) return fd_fail(FD_ERR_USAGE, "%s exists and is not a directory", dir);
        if (!force) return fd_fail(FD_ERR_USAGE, "%s exists; use --force to write into it", dir);
        return FD_OK;
    }
    if (mkdir(dir, 0777) != 0)
        return fd_fail(FD_ERR_IO, "%s: cannot create the output directory: %s", dir, strerror(errno));
    *created = 1;
    return FD_OK;
}

char *fd_path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}
