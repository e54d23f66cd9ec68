/* passes/registry.c — the table of passes, the -O pipelines, and the pass
 * manager that runs a pipeline with dumps and verification.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "passes/analyze.h"
#include "passes/passes.h"
#include "ir/phase.h"
#include "ir/target.h"
#include "passes/schedule/schedule.h"

/* Every pass, once.  Adding a pass is one line here (and its file). */
static const pass_info pass_list[] = {
    {"simplify", pass_simplify,
     "fold constants and index arithmetic; "
     "decide guards, branches and loops from ranges"},
    {"schedule", pass_schedule,
     "apply each function's schedule (split, reorder, cache_read, vectorize, ...)"},
    {"separate", pass_separate, "compute k x k max/min windows (pooling) as a pass along rows, then one across them"},
    {"layout-chains", pass_layout_chains,
     "store f32 activations between convolutions channels-last (before the schedule tiles them)"},
    {"autoschedule", pass_autoschedule,
     "choose a schedule for every function without one (tiles, packing, vectors, threads)"},
    {"fuse", pass_fuse,
     "compute elementwise layers (batchnorm, relu, ...) inside the tile of the layer before"},
    {"layout", pass_layout,
     "store activations with the border their readers pad them with, instead of padded copies"},
    {"dce", pass_dce,
     "remove stores to never-read local buffers, unused lets and allocations, empty loops"},
    {"serialize", pass_serialize,
     "run parallel loops with less work than starting their threads costs serially"},
    {"hoist", pass_hoist, "move loop-invariant lets out of loops"},
    {"prepack", pass_prepack,
     "compute what kernels derive from weights alone (packed panels) once, at load"},
    {"prefetch", pass_prefetch,
     "prefetch the next weight panel of contractions whose weights do not stay in L2"},
    {"flatten", pass_flatten, "make every buffer 1-D with row-major linear indices"},
    {"filled", pass_filled,
     "mark local buffers whose first statement stores every element filled (not zeroed)"},
    {"memplan", pass_memplan,
     "place graph temporaries with disjoint lifetimes in one shared arena (64-byte aligned)"},
    {"vectorize", pass_vectorize,
     "turn vectorized loops into vector IR (ramps, broadcasts, loops stepping by the lanes)"},
    {"instrument", pass_instrument, "insert profiling calls: layer enter/exit, site counters"},
    {"instrument-dyn", pass_instrument_dynamic,
     "instrument, counting every site inside its loops (tests counters against the analysis)"},
};

#define NPASSES ((int)(sizeof pass_list / sizeof pass_list[0]))

const pass_info *pass_table(int *n)
{
    *n = NPASSES;
    return pass_list;
}

const pass_info *pass_lookup(const char *name)
{
    for (int i = 0; i < NPASSES; i++)
        if (strcmp(pass_list[i].name, name) == 0)
            return &pass_list[i];
    return NULL;
}

/* -O0 only makes buffers 1-D (the generated C is then easiest to read);
 * -O1 cleans up before flattening (so dce sees whole buffers) and
 * simplifies again after it, when the linear indices are new.  -O2 and -O3
 * add the schedules, fusion, computing weight-only work at load (prepack,
 * before flatten so packed buffers keep their dimensions), running small
 * parallel loops serially (serialize: once the kernels are final, so that
 * a load function prepack takes out of a kernel's parallel loop is judged
 * on its own work, and -O2 on its own printed IR changes nothing) and,
 * last, once the graph's calls are final, memory planning. */
const char *pass_pipeline(int opt_level)
{
    switch (opt_level <= 0 ? 0 : opt_level >= 3 ? 3 : opt_level) {
    case 0: return "schedule,flatten";
    case 1: return "simplify,schedule,dce,flatten,simplify";
    default:
        return "simplify,schedule,layout-chains,separate,autoschedule,fuse,layout,simplify,hoist,dce,prepack,flatten,simplify,prefetch,filled,"
               "serialize,memplan";
    }
}

/* Vector IR is what the C emitter prints; the profile's analysis, the
 * instrumentation, the accelerator model and the schedulers read scalar
 * IR (blocks, unit-step loops), so it is made last, on a copy.  At every
 * level: a vectorized loop comes from a schedule that asked for it.  From
 * -O1 the simplifier then folds the vector IR's indices (the vectorizer
 * replaces block variables by their bindings) and removes chunks of one
 * iteration, so the printed IR read back and optimized again prints the
 * same (simplify is idempotent on vector IR; vectorize leaves it alone). */
const char *pass_emit_pipeline(int opt_level)
{
    return opt_level <= 0 ? "vectorize" : "vectorize,simplify";
}

static ir_graph_call *copy_calls(ir_module *c, const ir_module *m, const ir_graph_call *calls,
                                 int n)
{
    ir_graph_call *out = ir_alloc(c->arena, sizeof *out * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        out[i] = calls[i];
        for (int f = 0; f < m->nfuncs; f++)
            if (m->funcs[f] == calls[i].fn)
                out[i].fn = c->funcs[f];
    }
    return out;
}

ir_module *pass_lower_for_emit(const ir_module *m, const char *pipeline, const pass_options *o,
                               diag *d)
{
    ir_module *c = ir_module_new(m->name);
    if (!c) {
        diag_error(d, diag_noloc(), "out of memory");
        return NULL;
    }
    c->nfuncs = c->capfuncs = m->nfuncs;
    c->funcs = ir_alloc(c->arena, sizeof *c->funcs * (size_t)(m->nfuncs ? m->nfuncs : 1));
    for (int i = 0; i < m->nfuncs; i++) {
        ir_func *f = ir_alloc(c->arena, sizeof *f);
        *f = *m->funcs[i];
        f->capparams = f->capattrs = 0;   /* the arrays are m's: an append copies them */
        f->body = f->body ? ir_stmt_copy(c, f->body) : NULL;
        c->funcs[i] = f;
    }
    c->graph = m->graph;
    c->graph.capbufs = c->graph.capcalls = c->graph.caploads = 0;
    c->graph.calls = copy_calls(c, m, m->graph.calls, m->graph.ncalls);
    c->graph.loads = copy_calls(c, m, m->graph.loads, m->graph.nloads);
    if (!pass_run_pipeline(c, pipeline, o, d)) {
        ir_module_free(c);
        return NULL;
    }
    return c;
}

void pass_update_block_access(ir_module *m, ir_stmt *s)
{
    ir_buffer **r = s->reads, **w = s->writes;
    int nr = s->nreads, nw = s->nwrites;
    ir_block_update_access(m, s);
    bool same = nr == s->nreads && nw == s->nwrites;
    for (int i = 0; i < nr && same; i++) {
        same = false;
        for (int j = 0; j < s->nreads && !same; j++)
            same = r[i] == s->reads[j];
    }
    for (int i = 0; i < nw && same; i++) {
        same = false;
        for (int j = 0; j < s->nwrites && !same; j++)
            same = w[i] == s->writes[j];
    }
    if (same) {
        s->reads = r;
        s->writes = w;
    }
}

/* ---------------------------------------------------------------- name lists */

/* A comma-separated list split into names (spaces around names ignored). */
typedef struct name_list {
    char *text;     /* malloc'ed copy that names point into */
    char **names;
    int n;
} name_list;

static void name_list_free(name_list *l)
{
    free(l->text);
    free(l->names);
    l->text = NULL;
    l->names = NULL;
    l->n = 0;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = 0;
    return s;
}

/* Splits list; false (after reporting) on an empty name or no memory.
 * An empty or all-blank list gives no names. */
static bool split_names(const char *list, const char *what, name_list *out, diag *d)
{
    out->n = 0;
    out->names = NULL;
    out->text = strdup(list);
    size_t cap = 1;
    for (const char *p = list; *p; p++)
        cap += *p == ',';
    out->names = malloc(sizeof *out->names * cap);
    if (!out->text || !out->names) {
        diag_error(d, diag_noloc(), "out of memory");
        name_list_free(out);
        return false;
    }
    if (!*trim(out->text))
        return true;
    char *p = out->text;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = 0;
        char *name = trim(p);
        if (!*name) {
            diag_error(d, diag_noloc(), "empty pass name in %s '%s'", what, list);
            name_list_free(out);
            return false;
        }
        out->names[out->n++] = name;
        if (!comma)
            return true;
        p = comma + 1;
    }
}

/* Names --dump-ir takes besides the passes: "all", and "schedule-steps"
 * (the IR after each step of a written schedule). */
static bool dump_only_name(const char *name)
{
    return strcmp(name, "all") == 0 || strcmp(name, PASS_DUMP_SCHEDULE_STEPS) == 0;
}

static bool check_known(const name_list *l, bool allow_all, diag *d)
{
    for (int i = 0; i < l->n; i++)
        if (!pass_lookup(l->names[i]) && !(allow_all && dump_only_name(l->names[i]))) {
            diag_error(d, diag_noloc(), "unknown pass '%s' (see tec --list-passes)",
                       l->names[i]);
            return false;
        }
    return true;
}

static bool listed(const name_list *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->names[i], "all") == 0 || strcmp(l->names[i], name) == 0)
            return true;
    return false;
}

/* ---------------------------------------------------------------- dumps */

/* The module's name as a file name: its last path component, "module" if
 * it has none. */
static const char *dump_base(const ir_module *m, const pass_options *o)
{
    const char *b = o->base ? o->base : m->name;
    if (!b || !*b)
        return "module";
    const char *slash = strrchr(b, '/');
    return slash && slash[1] ? slash + 1 : b;
}

static bool ensure_dir(const char *dir, diag *d)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return true;
        diag_error(d, diag_noloc(), "cannot write IR dumps to '%s': not a directory", dir);
        return false;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        diag_error(d, diag_noloc(), "cannot create IR dump directory '%s': %s", dir,
                   strerror(errno));
        return false;
    }
    return true;
}

/* Writes DIR/BASE.NN.STAGE.tir. */
static bool dump_file(const ir_module *m, const pass_options *o, int index,
                      const char *stage, diag *d)
{
    const char *base = dump_base(m, o);
    size_t len = strlen(o->dump_dir) + strlen(base) + strlen(stage) + 32;
    char *path = malloc(len);
    if (!path) {
        diag_error(d, diag_noloc(), "out of memory");
        return false;
    }
    snprintf(path, len, "%s/%s.%02d.%s.tir", o->dump_dir, base, index, stage);
    FILE *f = fopen(path, "w");
    bool ok = f != NULL;
    if (ok) {
        ir_print_module(f, m);
        ok = !ferror(f);
        ok = fclose(f) == 0 && ok;
    }
    if (!ok)
        diag_error(d, diag_noloc(), "cannot write '%s': %s", path, strerror(errno));
    free(path);
    return ok;
}

static void dump_stream(const ir_module *m, const pass_options *o, const char *pass)
{
    FILE *out = o->dump_out ? o->dump_out : stderr;
    fprintf(out, "# -- IR after %s --\n", pass);
    ir_print_module(out, m);
    fflush(out);
}

/* ---------------------------------------------------------------- the pass manager */

/* Passes take (module, diag); the few facts of a run that a pass needs
 * beyond the module are read through accessors while the pipeline runs. */
static const struct cg_target *current_target;
static FILE *current_step_dump;

const struct cg_target *pass_target(void) { return current_target; }

void pass_target_or_native(struct cg_target *t)
{
    if (current_target)
        *t = *current_target;
    else
        cg_target_native(t);
}
FILE *pass_step_dump(void) { return current_step_dump; }

static bool run_pipeline(ir_module *m, const char *pipeline, const pass_options *o, diag *d);

/* ---------------------------------------------------------------- the memory plan */

/* The graph's calls (function and arguments), flattened, to see whether a
 * pass changed them: a memory plan (memplan) is only valid for the calls it
 * was made for. */
typedef struct call_snapshot {
    const void **items;
    size_t n;
} call_snapshot;

static bool snapshot_calls(const ir_graph *g, call_snapshot *s)
{
    size_t n = 1;
    for (int c = 0; c < g->ncalls; c++)
        n += 2 + (size_t)g->calls[c].nargs;
    s->n = 0;
    s->items = malloc(sizeof *s->items * n);
    if (!s->items)
        return false;
    for (int c = 0; c < g->ncalls; c++) {
        s->items[s->n++] = g->calls[c].fn;
        s->items[s->n++] = (const void *)(intptr_t)g->calls[c].nargs;
        for (int a = 0; a < g->calls[c].nargs; a++)
            s->items[s->n++] = g->calls[c].args[a];
    }
    return true;
}

static bool same_calls(const ir_graph *g, const call_snapshot *s)
{
    call_snapshot now;
    if (!snapshot_calls(g, &now))
        return false;
    bool same = now.n == s->n && memcmp(now.items, s->items, sizeof *s->items * s->n) == 0;
    free(now.items);
    return same;
}

/* A pass that changed the graph's calls drops the memory plan made before
 * it (a temp may now be live longer): run memplan again after such passes. */
static void drop_plan(ir_graph *g)
{
    g->has_arena = false;
    g->arena_bytes = 0;
    for (int i = 0; i < g->nbufs; i++) {
        g->bufs[i]->in_arena = false;
        g->bufs[i]->arena_offset = 0;
    }
}

bool pass_run_pipeline(ir_module *m, const char *pipeline, const pass_options *o, diag *d)
{
    const struct cg_target *saved = current_target;
    FILE *saved_dump = current_step_dump;
    current_target = o ? o->target : NULL;
    current_step_dump = NULL;
    bool ok = run_pipeline(m, pipeline, o, d);
    current_target = saved;
    current_step_dump = saved_dump;
    return ok;
}

bool pass_check_names(const char *pipeline, const char *dump_ir, diag *d)
{
    name_list passes = {0}, dumps = {0};
    bool ok = split_names(pipeline ? pipeline : "", "pipeline", &passes, d) &&
              check_known(&passes, false, d);
    name_list_free(&passes);
    ok = ok && (!dump_ir || (split_names(dump_ir, "--dump-ir", &dumps, d) &&
                             check_known(&dumps, true, d)));
    name_list_free(&dumps);
    return ok;
}

static bool run_pipeline(ir_module *m, const char *pipeline, const pass_options *o, diag *d)
{
    static const pass_options none = {0};
    if (!o)
        o = &none;
    name_list passes, dumps = {0};
    if (!split_names(pipeline ? pipeline : "", "pipeline", &passes, d))
        return false;
    bool ok = check_known(&passes, false, d);
    if (ok && o->dump_ir)
        ok = split_names(o->dump_ir, "--dump-ir", &dumps, d) && check_known(&dumps, true, d);
    for (int i = 0; ok && i < dumps.n; i++)
        if (strcmp(dumps.names[i], PASS_DUMP_SCHEDULE_STEPS) == 0)
            current_step_dump = o->dump_out ? o->dump_out : stderr;
    if (ok && o->dump_dir)
        ok = ensure_dir(o->dump_dir, d) && dump_file(m, o, 0, "input", d);
    for (int i = 0; ok && i < passes.n; i++) {
        const pass_info *p = pass_lookup(passes.names[i]);
        int before = d->nerrors;
        call_snapshot calls = {NULL, 0};
        bool planned = m->graph.has_arena && p->run != pass_memplan;
        if (planned && !snapshot_calls(&m->graph, &calls)) {
            diag_error(d, diag_noloc(), "out of memory");
            ok = false;
            break;
        }
        ir_phase_push(p->name);
        ok = p->run(m, d);
        ir_phase_pop();
        if (ok && planned && !same_calls(&m->graph, &calls))
            drop_plan(&m->graph);
        free(calls.items);
        if (!ok && d->nerrors == before)   /* a pass must say why it failed */
            diag_internal(d, p->name, "the pass failed without a diagnostic");
        if (ok && o->verify_each)
            ok = ir_verify(m, p->name, d);
        if (ok && o->dump_ir && listed(&dumps, p->name))
            dump_stream(m, o, p->name);
        if (ok && o->dump_dir)
            ok = dump_file(m, o, i + 1, p->name, d);
    }
    name_list_free(&passes);
    name_list_free(&dumps);
    return ok;
}
