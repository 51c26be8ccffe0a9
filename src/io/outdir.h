/* Result directories: created by rank 0 before any rank writes, refused
 * when they exist unless the user said --force, removed again when the run
 * that created them fails. */
#ifndef FD_OUTDIR_H
#define FD_OUTDIR_H

#include "../common/status.h"

/* Creates dir (refusing an existing one without force, and anything that
 * is not a directory); *created tells whether to remove it on failure. */
fd_status fd_outdir_prepare(const char *dir, int force, int *created);

/* "DIR/NAME" in newly allocated memory, or NULL. */
char *fd_path_join(const char *dir, const char *name);

#endif
