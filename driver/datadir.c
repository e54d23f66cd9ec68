/* driver/datadir.c — the op library's folders (see datadir.h). */
#include "config.h"

#include "driver/datadir.h"

#include <stdio.h>
#include <string.h>

#include "driver/paths.h"

void drv_datadirs_find(drv_datadirs *dd, const char *self)
{
    dd->n = 0;
    const char *slash = self ? strrchr(self, '/') : NULL;
    int k = slash ? (int)(slash - self) : -1;
    if (k >= 0 && k + 16 < DRV_PATH_MAX) {
        snprintf(dd->buf[0], DRV_PATH_MAX, "%.*s/lib", k, self);
        dd->dir[dd->n++] = dd->buf[0];
    }
    /* the prefix: the binary's folder's parent */
    int p = k - 1;
    while (p >= 0 && self[p] != '/')
        p--;
    if (p >= 0 && p + 16 < DRV_PATH_MAX) {
        snprintf(dd->buf[1], DRV_PATH_MAX, "%.*s/share/tec", p, self);
        dd->dir[dd->n++] = dd->buf[1];
    }
    dd->dir[dd->n++] = TEC_PKGDATADIR;
}
