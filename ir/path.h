/* ir/path.h — file-system paths for every floor: joining a directory and
 * a name, and creating a directory with its parents (mkdir -p).  The
 * callers word their own diagnostics from what these return. */
#ifndef TEC_IR_PATH_H
#define TEC_IR_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* dir/name, malloc'ed: name alone when dir is empty or name is absolute,
 * no second '/' when dir ends in one.  NULL when out of memory. */
char *ir_path_join(const char *dir, const char *name);

/* Creates path and its missing parents with mode (those that exist are
 * kept, whatever their mode), as mkdir -p does.  False when a component
 * cannot be created or exists and is not a directory (errno says why:
 * ENOTDIR for the latter, ENOMEM when out of memory); the component is
 * then copied into failed (len bytes, NUL-terminated) if failed is not
 * NULL. */
bool ir_make_dirs(const char *path, mode_t mode, char *failed, size_t len);

#endif
