/* Minimal test harness: CHECK records a failure with its line and goes on;
 * the program exits 1 if anything failed and prints "N passed, M failed". */
#ifndef FD_TESTUTIL_H
#define FD_TESTUTIL_H

#include <stdio.h>

static int t_pass, t_fail;

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (cond) t_pass++;                                                   \
        else {                                                                \
            t_fail++;                                                         \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
        }                                                                     \
    } while (0)

static inline int t_report(void)
{
    printf("%d passed, %d failed\n", t_pass, t_fail);
    return t_fail ? 1 : 0;
}

#endif
