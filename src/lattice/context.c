/* SPDX-License-Identifier: BSD-3-Clause */
#include "context.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

fd_status fca_context_create(fca_context **out, uint32_t n_obj, uint32_t n_attr, uint64_t nnz)
{
    fd_status st = FD_OK;
    fca_context *c = NULL;
    FD_ALLOC_GOTO(c, 1, st, fail);
    c->n_obj = n_obj;
    c->n_attr = n_attr;
    FD_ALLOC_GOTO(c->row_ptr, (size_t)n_obj + 1, st, fail);
    FD_ALLOC_GOTO(c->row_idx, nnz, st, fail);
    FD_ALLOC_GOTO(c->attr_label, n_attr, st, fail);
    FD_ALLOC_GOTO(c->attr_names, n_attr, st, fail);
    for (uint32_t a = 0; a < n_attr; a++) c->attr_label[a] = a;
    *out = c;
    return FD_OK;
fail:
    fca_context_destroy(&c);
    return st;
}

void fca_context_destroy(fca_context **pc)
{
    fca_context *c = *pc;
    if (!c) return;
    if (c->attr_names)
        for (uint32_t a = 0; a < c->n_attr; a++) free(c->attr_names[a]);
    if (c->obj_names)
        for (uint32_t o = 0; o < c->n_obj; o++) free(c->obj_names[o]);
    free(c->attr_names);
    free(c->obj_names);
    fca_context_drop_incidence(c);
    free(c->attr_label);
    free(c->source);
    free(c);
    *pc = NULL;
}

void fca_context_drop_incidence(fca_context *c)
{
    free(c->row_ptr);
    free(c->row_idx);
    c->row_ptr = NULL;
    c->row_idx = NULL;
}

ctx_format ctx_format_from_name(const char *name)
{
    if (!strcasecmp(name, "cxt")) return CTX_FMT_CXT;
    if (!strcasecmp(name, "dat") || !strcasecmp(name, "fimi")) return CTX_FMT_FIMI;
    if (!strcasecmp(name, "csv")) return CTX_FMT_CSV;
    if (!strcasecmp(name, "tsv")) return CTX_FMT_TSV;
    return CTX_FMT_AUTO;
}

ctx_format ctx_format_from_path(const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash)) return CTX_FMT_AUTO;
    return ctx_format_from_name(dot + 1);
}

const char *ctx_format_name(ctx_format f)
{
    switch (f) {
    case CTX_FMT_CXT: return "cxt";
    case CTX_FMT_FIMI: return "fimi";
    case CTX_FMT_CSV: return "csv";
    case CTX_FMT_TSV: return "tsv";
    default: return "auto";
    }
}

void fca_context_supports(const fca_context *ctx, uint32_t *supp)
{
    memset(supp, 0, (size_t)ctx->n_attr * sizeof *supp);
    for (uint64_t k = 0; k < ctx->row_ptr[ctx->n_obj]; k++) supp[ctx->row_idx[k]]++;
}

uint64_t fd_phys_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || psize <= 0) return (uint64_t)1 << 40;
    return (uint64_t)pages * (uint64_t)psize;
}
