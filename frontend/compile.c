/* frontend/compile.c — fe_compile: files, imports, -D, and the phases.
 *
 * Phases: parse the main file and, depth first, every file it imports
 * (each file once, however often it is imported; an import cycle is an
 * error); if all parsed, elaborate (frontend/sema.c).  Syntax errors stop
 * before elaboration, so a broken statement does not cascade into "unknown
 * name" errors. */
#include "frontend/frontend.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frontend/parse.h"
#include "frontend/sema.h"
#include "ir/path.h"

/* A file already read, under its canonical path. */
typedef struct loaded {
    const char *key;
    fe_file *file;
} loaded;

/* Loading state: the files read so far and the import chain (for cycle
 * messages). */
typedef struct loader {
    fe_ctx *c;
    loaded *files;
    int nfiles, capfiles;
    fe_file **chain;
    int nchain, capchain;
} loader;

static const char *dir_of(ir_arena *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return "";
    if (slash == path)
        return "/";
    return ir_strndup(a, path, (size_t)(slash - path));
}

/* dir/name in the arena (ir_path_join). */
static const char *path_join(ir_arena *a, const char *dir, const char *name)
{
    char *p = ir_path_join(dir, name);
    if (!p)
        ir_out_of_memory();
    const char *r = ir_strdup(a, p);
    free(p);
    return r;
}

static const char *canonical(ir_arena *a, const char *path)
{
    char buf[PATH_MAX];
    return realpath(path, buf) ? ir_strdup(a, buf) : path;
}

char *fe_read_source(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return NULL;
    struct stat st;
    int err = 0;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
        err = EISDIR;
    size_t cap = 1 << 16, n = 0;
    char *buf = err ? NULL : malloc(cap);
    if (!buf && !err)
        err = ENOMEM;
    while (!err) {
        if (n + 1 == cap) {
            if (cap > FE_MAX_SOURCE_BYTES) {
                err = EFBIG;
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                err = ENOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        if (got == 0) {
            err = ferror(f) ? (errno ? errno : EIO) : 0;
            break;
        }
        n += got;
    }
    if (!err && n > FE_MAX_SOURCE_BYTES)
        err = EFBIG;
    if (f != stdin)
        fclose(f);
    if (err) {
        free(buf);
        errno = err;
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

const char *fe_read_error(int err)
{
    return err == EFBIG ? "larger than the 64 MiB a source file may have" : strerror(err);
}

/* Reads a whole file into the arena; NULL with errno set on failure. */
static char *read_file(ir_arena *a, const char *path, size_t *len)
{
    char *buf = fe_read_source(path, len);
    if (!buf)
        return NULL;
    char *text = ir_strndup(a, buf, *len);
    free(buf);
    return text;
}

static void load_imports(loader *ld, fe_file *f);

static fe_file *new_file(loader *ld, const char *name, const char *text, size_t len)
{
    fe_ctx *c = ld->c;
    fe_file *f = ir_alloc(c->a, sizeof *f);
    f->name = name;
    f->dir = dir_of(c->a, name);
    f->text = text;
    f->len = len;
    IR_PUSH(c->a, c->files, c->nfiles, c->capfiles, f);
    return f;
}

static void parse_and_import(loader *ld, fe_file *f)
{
    fe_parse_file(f, ld->c->a, ld->c->d);
    f->import_state = 1;
    IR_PUSH(ld->c->a, ld->chain, ld->nchain, ld->capchain, f);
    load_imports(ld, f);
    ld->nchain--;
    f->import_state = 2;
}

static void tell_dep(fe_ctx *c, fe_dep_kind kind, const char *path, const char *canonical,
                     const char *text, size_t len)
{
    if (c->o && c->o->on_dep)
        c->o->on_dep(c->o->dep_ctx, kind, path, canonical, text, len);
}

/* Resolves `import "path"` in f: f's directory, then the include dirs. */
static void resolve_import(loader *ld, fe_file *f, fe_stmt *s)
{
    fe_ctx *c = ld->c;
    const char *searched = "";
    const char *found = NULL;
    /* Only .te files: another file's lines would be echoed in the syntax
     * errors it causes (import "/etc/shadow"). */
    size_t n = strlen(s->name);
    if (n < 3 || strcmp(s->name + n - 3, ".te") != 0) {
        fe_error(c, s->name_span, "cannot import \"%s\": an imported file must be a .te file",
                 s->name);
        return;
    }
    /* An absolute path is only looked for where it says. */
    bool absolute = s->name[0] == '/';
    int ndirs = absolute ? 1 : 1 + (c->o ? c->o->ninclude : 0);
    int first = !absolute && f == c->main && c->o && c->o->imports_from_includes_only;
    for (int i = first; i < ndirs && !found; i++) {
        const char *dir = absolute ? dir_of(c->a, s->name) : i == 0 ? f->dir : c->o->include_dirs[i - 1];
        const char *path = absolute ? s->name : path_join(c->a, dir, s->name);
        FILE *probe = fopen(path, "rb");
        if (probe) {
            fclose(probe);
            found = path;
        } else {
            tell_dep(c, FE_DEP_ABSENT, path, NULL, NULL, 0);
        }
        searched = ir_sprintf(c->a, "%s%s%s", searched, *searched ? ", " : "", *dir ? dir : ".");
    }
    if (!found) {
        fe_error(c, s->name_span, "cannot find import \"%s\" (searched: %s)", s->name, searched);
        return;
    }
    const char *key = canonical(c->a, found);
    for (int i = 0; i < ld->nfiles; i++)
        if (strcmp(ld->files[i].key, key) == 0) {
            fe_file *g = ld->files[i].file;
            if (g->import_state == 1) {
                const char *cycle = "";
                int start = 0;
                for (int k = 0; k < ld->nchain; k++)
                    if (ld->chain[k] == g)
                        start = k;
                for (int k = start; k < ld->nchain; k++)
                    cycle = ir_sprintf(c->a, "%s%s -> ", cycle, ld->chain[k]->name);
                fe_error(c, s->name_span, "import cycle: %s%s", cycle, g->name);
                return;
            }
            tell_dep(c, FE_DEP_PRESENT, found, key, NULL, 0);
            s->imported = g;
            return;
        }
    size_t len;
    char *text = read_file(c->a, found, &len);
    if (!text) {
        fe_error(c, s->name_span, "cannot read import \"%s\" (%s): %s", s->name, found,
                 fe_read_error(errno));
        return;
    }
    tell_dep(c, FE_DEP_READ, found, key, text, len);
    fe_file *g = new_file(ld, found, text, len);
    loaded l = {key, g};
    IR_PUSH(c->a, ld->files, ld->nfiles, ld->capfiles, l);
    diag_add_source(c->d, g->name, g->text, g->len);
    s->imported = g;
    parse_and_import(ld, g);
}

static void load_imports(loader *ld, fe_file *f)
{
    for (int i = 0; i < f->nstmts; i++)
        if (f->stmts[i]->kind == FE_S_IMPORT)
            resolve_import(ld, f, f->stmts[i]);
}

/* "net" for "dir/net.te"; "stdin" for standard input. */
static const char *module_name(ir_arena *a, const char *filename)
{
    if (strcmp(filename, "<stdin>") == 0 || strcmp(filename, "-") == 0)
        return "stdin";
    const char *base = strrchr(filename, '/');
    base = base ? base + 1 : filename;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base)
        return base;
    return ir_strndup(a, base, (size_t)(dot - base));
}

ir_module *fe_compile(const char *filename, const char *text, size_t len,
                      const fe_options *o, diag *d)
{
    int nerrors0 = d->nerrors;
    diag_add_source(d, filename, text, len);
    int nsources_main = d->nsources;

    fe_ctx c = {0};
    c.a = ir_arena_new();
    c.d = d;
    c.o = o;
    c.m = ir_module_new(module_name(c.a, filename));
    if (o && o->ndefines)
        c.define_used = ir_alloc(c.a, sizeof(bool) * (size_t)o->ndefines);

    loader ld = {.c = &c};
    /* The main file keeps the caller's name and directory. */
    c.main = new_file(&ld, ir_strdup(c.a, filename), text, len);
    if (strcmp(filename, "<stdin>") == 0)
        c.main->dir = "";
    loaded l = {canonical(c.a, filename), c.main};
    tell_dep(&c, FE_DEP_MAIN, filename, l.key, NULL, 0);
    IR_PUSH(c.a, ld.files, ld.nfiles, ld.capfiles, l);
    parse_and_import(&ld, c.main);

    bool parsed = c.errors == 0;
    for (int i = 0; i < c.nfiles; i++)
        parsed = parsed && c.files[i]->syntax_ok;
    bool ok = parsed && fe_elaborate(&c);
    if (parsed && o)
        for (int i = 0; i < o->ndefines; i++)
            if (!c.define_used[i]) {
                diag_error(d, diag_noloc(), "-D %s=%s: the program has no 'let %s'", o->defines[i].name,
                           o->defines[i].value, o->defines[i].name);
                ok = false;
            }
    ok = ok && d->nerrors == nerrors0;

    /* Imported texts live in c.a: forget them before it is freed. */
    if (d->nsources > nsources_main)
        d->nsources = nsources_main;
    ir_arena_free(c.a);
    if (!ok) {
        ir_module_free(c.m);
        return NULL;
    }
    return c.m;
}
