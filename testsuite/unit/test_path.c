/* Unit tests of ir/path.c: joining paths and mkdir -p, in a scratch
 * directory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/path.h"
#include "testsuite/unit/test.h"

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool joined(const char *dir, const char *name, const char *want)
{
    char *p = ir_path_join(dir, name);
    bool ok = p && strcmp(p, want) == 0;
    if (!ok)
        printf("  ir_path_join(\"%s\", \"%s\") = \"%s\", expected \"%s\"\n", dir, name,
               p ? p : "(null)", want);
    free(p);
    return ok;
}

int main(void)
{
    CHECK(joined("out", "y.npy", "out/y.npy"));
    CHECK(joined("out/", "y.npy", "out/y.npy"));
    CHECK(joined("/", "tmp", "/tmp"));
    CHECK(joined("", "y.npy", "y.npy"));
    CHECK(joined("out", "/abs/y.npy", "/abs/y.npy"));

    char dir[512];
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tec_path_XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char *deep = ir_path_join(dir, "a/b/c");
    char failed[512] = "";
    check(ir_make_dirs(deep, 0700, failed, sizeof failed) && is_dir(deep), "mkdir -p of a/b/c");
    check(ir_make_dirs(deep, 0700, failed, sizeof failed), "an existing directory is kept");
    char *file = ir_path_join(dir, "a/f");
    FILE *f = fopen(file, "w");
    if (f)
        fclose(f);
    char *under = ir_path_join(file, "g");
    errno = 0;
    bool made = ir_make_dirs(under, 0700, failed, sizeof failed);
    check(!made && errno == ENOTDIR && strcmp(failed, file) == 0,
          "a file in the way: ENOTDIR, named (%s)", failed);
    rmdir(deep);
    char *b = ir_path_join(dir, "a/b");
    rmdir(b);
    unlink(file);
    char *a = ir_path_join(dir, "a");
    rmdir(a);
    rmdir(dir);
    free(deep), free(file), free(under), free(b), free(a);
    return test_exit("test_path");
}
