/* runtime/npy.h — NumPy .npy files: the format of tec's inputs, weights and
 * saved outputs.  doc/data.md lists the rules and every message.
 *
 * The reader is strict: format versions 1.0, 2.0 and 3.0; a header dict
 * with exactly the keys 'descr', 'fortran_order' and 'shape'; little-endian
 * <f2 <f4 <f8 <i4 <i8 or |b1 data in C order; at most RT_MAX_DIMS
 * dimensions; and exactly as many data bytes as the shape needs.  Every
 * error message starts with the file's path.
 */
#ifndef TEC_RUNTIME_NPY_H
#define TEC_RUNTIME_NPY_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/tensor.h"

/* Most header bytes the reader accepts (NumPy's own limit for untrusted
 * files is in the same range; real headers are under 200 bytes). */
#define RT_NPY_MAX_HEADER 65536

/* Reads path into a new tensor, or returns NULL with "PATH: ..." in err. */
rt_tensor *rt_npy_read(const char *path, char *err, size_t errlen);

/* The type an array must have. */
typedef struct rt_npy_type {
    ir_dtype dtype;
    int ndim;
    int64_t shape[RT_MAX_DIMS];
} rt_npy_type;

/* As rt_npy_read, but a file whose header declares another type than
 * `want` is refused before any data is read or allocated (a header from a
 * pipe could claim gigabytes): NULL with its type in *got and err empty. */
rt_tensor *rt_npy_read_as(const char *path, const rt_npy_type *want, rt_npy_type *got,
                          char *err, size_t errlen);

/* Writes t to path as a version 1.0, little-endian, C-order .npy file.  The
 * data goes to a new temporary file of path's directory first (see
 * rt_npy_write_temp), which is then renamed over path, so a reader never
 * sees a half-written file.  bf16 has no NumPy dtype and is refused.
 * Returns false with "PATH: ..." in err on failure. */
bool rt_npy_write(const char *path, const rt_tensor *t, char *err, size_t errlen);

/* The first half of rt_npy_write: writes t, synced, to a temporary file
 * DIR/.NAME.XXXXXX beside path, created by mkstemp (a fresh name, opened
 * exclusively: nothing planted there can redirect the write) with the mode
 * a new file gets under the umask, and returns its name (malloc'd), or
 * NULL with "PATH: ..." in err, leaving nothing behind.  The caller renames
 * it over path, or unlinks it. */
char *rt_npy_write_temp(const char *path, const rt_tensor *t, char *err, size_t errlen);

/* Any file replaced whole, the way rt_npy_write replaces a .npy:
 * rt_file_create opens a new temporary beside path for writing (as
 * rt_npy_write_temp makes it; its name in *tmp, malloc'ed), and
 * rt_file_commit flushes, syncs and closes it and renames it over path,
 * or, when that or an earlier write failed, removes it.  Both return
 * NULL/false with errno set; commit frees tmp.  A failed write thus
 * leaves path as it was, never half written. */
FILE *rt_file_create(const char *path, char **tmp);
bool rt_file_commit(FILE *f, char *tmp, const char *path);

/* Writes the header dict np.save writes for an array (before its padding):
 * "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" (ndim at
 * most RT_MAX_DIMS).  Returns snprintf's count. */
int rt_npy_header_dict(char *buf, size_t len, const char *descr, int ndim, const int64_t *shape);

/* The .npy descr of a dtype ("<f4"), or NULL when NumPy has none (bf16). */
const char *rt_npy_descr(ir_dtype t);

#endif
