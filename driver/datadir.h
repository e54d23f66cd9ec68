/* driver/datadir.h — where tec and libtec find the op library (nn.te).
 *
 * Three folders, in this order:
 *   1. BINDIR/lib, beside the binary: an uninstalled build tree (the
 *      build links lib/nn.te there);
 *   2. PREFIX/share/tec, PREFIX the parent of BINDIR: an installed tree, wherever it was installed
 *      (`make install prefix=P` builds nothing again) or moved to;
 *   3. the data folder of the configured prefix, for a --datadir apart
 *      from the prefix: driver/paths.h, which the build rewrites when
 *      configure changes the folder (so `./configure --prefix=P && make
 *      install` after an earlier build rebuilds what names it, without
 *      `make clean`).
 * BINDIR is the folder of the running tec, or of the loaded libtec. */
#ifndef TEC_DRIVER_DATADIR_H
#define TEC_DRIVER_DATADIR_H

enum { DRV_DATADIR_MAX = 3, DRV_PATH_MAX = 4096 };

typedef struct drv_datadirs {
    const char *dir[DRV_DATADIR_MAX];
    int n;
    char buf[2][DRV_PATH_MAX];   /* what dir[] points into */
} drv_datadirs;

/* Fills dd for the binary at `self` (a path; NULL: none known). */
void drv_datadirs_find(drv_datadirs *dd, const char *self);

#endif
