/* SPDX-License-Identifier: BSD-3-Clause */
/* Writers for the context formats (used by `gen context` and by the format
 * round-trip tests).  Names are written as stored. */
#include "context.h"

#include "../common/atomicfile.h"

#include <stdlib.h>
#include <string.h>

static void write_cxt(const fca_context *c, FILE *f, char *row)
{
    fprintf(f, "B\n\n%u\n%u\n\n", c->n_obj, c->n_attr);
    for (uint32_t o = 0; o < c->n_obj; o++) {
        if (c->obj_names) fprintf(f, "%s\n", c->obj_names[o]);
        else fprintf(f, "g%u\n", o);
    }
    for (uint32_t a = 0; a < c->n_attr; a++) fprintf(f, "%s\n", c->attr_names[a]);
    for (uint32_t o = 0; o < c->n_obj; o++) {
        memset(row, '.', c->n_attr);
        for (uint64_t k = c->row_ptr[o]; k < c->row_ptr[o + 1]; k++) row[c->row_idx[k]] = 'X';
        row[c->n_attr] = '\n';
        fwrite(row, 1, (size_t)c->n_attr + 1, f);
    }
}

static void write_fimi(const fca_context *c, FILE *f)
{
    for (uint32_t o = 0; o < c->n_obj; o++) {
        for (uint64_t k = c->row_ptr[o]; k < c->row_ptr[o + 1]; k++)
            fprintf(f, k == c->row_ptr[o] ? "%u" : " %u", c->attr_label[c->row_idx[k]]);
        fputc('\n', f);
    }
}

static void write_table(const fca_context *c, FILE *f, char delim, char *row)
{
    fputs("name", f);
    for (uint32_t a = 0; a < c->n_attr; a++) fprintf(f, "%c%s", delim, c->attr_names[a]);
    fputc('\n', f);
    for (uint32_t o = 0; o < c->n_obj; o++) {
        if (c->obj_names) fputs(c->obj_names[o], f);
        else fprintf(f, "g%u", o);
        for (uint32_t a = 0; a < c->n_attr; a++) {
            row[2 * a] = delim;
            row[2 * a + 1] = '0';
        }
        for (uint64_t k = c->row_ptr[o]; k < c->row_ptr[o + 1]; k++) row[2 * c->row_idx[k] + 1] = '1';
        row[2 * (size_t)c->n_attr] = '\n';
        fwrite(row, 1, 2 * (size_t)c->n_attr + 1, f);
    }
}

fd_status fca_context_write(const fca_context *c, const char *path, ctx_format fmt)
{
    fd_afile af;
    char *row = malloc(2 * (size_t)c->n_attr + 2);
    if (!row) return fd_fail(FD_ERR_NOMEM, "out of memory");
    fd_status st = fd_afile_open(&af, path);
    if (st != FD_OK) { free(row); return st; }
    switch (fmt) {
    case CTX_FMT_CXT: write_cxt(c, af.f, row); break;
    case CTX_FMT_FIMI: write_fimi(c, af.f); break;
    case CTX_FMT_CSV: write_table(c, af.f, ',', row); break;
    case CTX_FMT_TSV: write_table(c, af.f, '\t', row); break;
    default:
        free(row);
        fd_afile_abort(&af);
        return fd_fail(FD_ERR_USAGE, "%s: cannot tell the format to write; use an extension .cxt, .dat, .csv or .tsv", path);
    }
    free(row);
    return fd_afile_commit(&af);
}
