/* ir/path.c — paths (see path.h). */
#include "ir/path.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *ir_path_join(const char *dir, const char *name)
{
    if (!*dir || name[0] == '/')
        return strdup(name);
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
    return p;
}

bool ir_make_dirs(const char *path, mode_t mode, char *failed, size_t len)
{
    char *p = strdup(path);
    if (!p) {
        errno = ENOMEM;
        return false;
    }
    bool ok = true;
    for (char *s = p + 1; ok; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        struct stat st;
        if (mkdir(p, mode) != 0 && errno != EEXIST) {
            ok = false;
        } else if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
            errno = ENOTDIR;
            ok = false;
        }
        if (!ok && failed && len)
            snprintf(failed, len, "%s", p);
        *s = c;
        if (c == '\0')
            break;
    }
    int saved = errno;
    free(p);
    errno = saved;
    return ok;
}
