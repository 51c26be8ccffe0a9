/* SPDX-License-Identifier: BSD-3-Clause */
/* Libraries loaded when first needed (see dynlib.h). */
#include "dynlib.h"

#include <dlfcn.h>
#include <stdio.h>

static void load(fd_dynlib *lib)
{
    /* RTLD_LOCAL: the symbols are reached through the table only, and a
     * second copy of a library elsewhere in the process cannot capture
     * them. */
    void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
    if (!h && lib->dir) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", lib->dir, lib->soname) < (int)sizeof path)
            h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    }
    if (!h) {
        const char *e = dlerror();
        snprintf(lib->why, sizeof lib->why, "cannot load %s (%s needs it; add its folder to LD_LIBRARY_PATH): %s",
                 lib->soname, lib->need, e ? e : "not found");
        lib->state = -1;
        return;
    }
    for (const fd_dynsym *s = lib->syms; s->name; s++) {
        *s->slot = dlsym(h, s->name);
        if (!*s->slot && !s->optional) {
            snprintf(lib->why, sizeof lib->why, "%s has no %s (%s needs it): another version than the build's?",
                     lib->soname, s->name, lib->need);
            lib->state = -1;
            return;
        }
    }
    lib->handle = h;
    lib->state = 1;
    if (lib->loaded) lib->loaded(h);
}

void fd_dynlib_preload(fd_dynlib *lib)
{
    pthread_mutex_lock(&lib->lock);
    if (!lib->state) load(lib);
    pthread_mutex_unlock(&lib->lock);
}

fd_status fd_dynlib_load(fd_dynlib *lib)
{
    pthread_mutex_lock(&lib->lock);
    if (!lib->state) load(lib);
    const int ok = lib->state == 1;
    pthread_mutex_unlock(&lib->lock);
    return ok ? FD_OK : fd_fail(lib->err, "%s", lib->why);
}
