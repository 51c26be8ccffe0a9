/* SPDX-License-Identifier: BSD-3-Clause */
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *fd_backend_default(void)
{
    const char *e = getenv("FD_BACKEND");
    return e && *e ? e : "auto";
}

int fd_backend_available(const fd_device_ops *b) { return !b->available || b->available(); }

int fd_backend_present(const fd_device_ops *b) { return !b->present || b->present(); }

fd_status fd_backend_refuse(const fd_device_ops *b)
{
    return fd_fail(FD_ERR_UNAVAILABLE, "backend '%s' cannot run here (no usable device)", b->name);
}

const char *fd_backend_names(const fd_device_ops *const *table, size_t n, char *buf, size_t cap)
{
    buf[0] = 0;
    for (size_t i = 0; i < n; i++)
        snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", i ? ", " : "", table[i]->name);
    return buf;
}

fd_status fd_backend_get(const fd_device_ops *const *table, size_t n, const char *workload, const char *name,
                         const fd_device_ops **chosen)
{
    char names[128];
    if (!strcmp(name, "auto")) {
        /* Later entries are faster when they can run. */
        for (size_t i = n; i-- > 0;)
            if (fd_backend_available(table[i])) {
                *chosen = table[i];
                return FD_OK;
            }
    }
    for (size_t i = 0; i < n; i++)
        if (!strcmp(name, table[i]->name)) {
            if (!fd_backend_available(table[i])) return fd_backend_refuse(table[i]);
            *chosen = table[i];
            return FD_OK;
        }
    return fd_fail(FD_ERR_UNAVAILABLE, "backend '%s' is not available for %s in this build (available: %s)", name,
                   workload, fd_backend_names(table, n, names, sizeof names));
}

fd_status fd_backend_find(const fd_device_ops *const *table, size_t n, const char *workload, const char *name,
                          const fd_device_ops **chosen)
{
    if (strcmp(name, "auto") != 0)
        for (size_t i = 0; i < n; i++)
            if (!strcmp(name, table[i]->name)) {
                *chosen = table[i];
                return FD_OK;
            }
    return fd_backend_get(table, n, workload, name, chosen);
}
