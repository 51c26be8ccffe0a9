/* Independent oracle for the command-line tests: reads a context (any
 * format, through the project's readers only) and prints every closed
 * intent by brute force over all attribute subsets, one per line, ids
 * ascending: the same text as `fcbo-dist lattice --text`.
 * usage: fd_bruteforce CONTEXT [MIN_SUPPORT]   (at most 20 attributes) */
#include "lattice/context.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    fca_context *c = NULL;
    if (argc < 2) return 2;
    uint32_t minsup = argc > 2 ? (uint32_t)atoi(argv[2]) : 0;
    if (fca_context_read(&c, argv[1], CTX_FMT_AUTO) != FD_OK) {
        fprintf(stderr, "fd_bruteforce: %s\n", fd_errmsg());
        return 2;
    }
    if (c->n_attr > 20) {
        fprintf(stderr, "fd_bruteforce: %u attributes is too many for brute force\n", c->n_attr);
        return 2;
    }
    uint32_t m = c->n_attr, all = (1u << m) - 1;
    uint32_t *rows = calloc(c->n_obj + 1, sizeof *rows);
    for (uint32_t o = 0; o < c->n_obj; o++)
        for (uint64_t k = c->row_ptr[o]; k < c->row_ptr[o + 1]; k++) rows[o] |= 1u << c->row_idx[k];
    for (uint32_t S = 0;; S++) {
        uint32_t ext = 0, intent = all;
        for (uint32_t o = 0; o < c->n_obj; o++)
            if ((rows[o] & S) == S) { ext++; intent &= rows[o]; }
        if (intent == S && ext >= minsup) {
            int first = 1;
            for (uint32_t a = 0; a < m; a++)
                if (S >> a & 1) { printf(first ? "%u" : " %u", c->attr_label[a]); first = 0; }
            putchar('\n');
        }
        if (S == all) break;
    }
    free(rows);
    fca_context_destroy(&c);
    return 0;
}
