/* runtime/dag.c — the DAG of a graph's calls, its critical path and its
 * fork-join paths. */
#include "runtime/dag.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes/analyze.h"
#include "runtime/profile.h"

/* Whether graph buffers a and b are the same storage. */
static bool same_storage(const ir_graph *g, int a, int b, bool share_arena)
{
    if (a == b)
        return true;
    const ir_buffer *x = g->bufs[a], *y = g->bufs[b];
    if (!share_arena || !g->has_arena || !x->in_arena || !y->in_arena)
        return false;
    int64_t xn = ir_buffer_bytes(x), yn = ir_buffer_bytes(y);
    return x->arena_offset < y->arena_offset + yn && y->arena_offset < x->arena_offset + xn;
}

/* Whether call j (later) must wait for call i: one of them writes storage
 * the other touches. */
static bool depends(const rt_dag *dg, const int *const *argbuf, int i, int j, bool share_arena)
{
    const ir_graph *g = &dg->m->graph;
    const ir_graph_call *ci = &g->calls[i], *cj = &g->calls[j];
    for (int a = 0; a < ci->nargs; a++) {
        bool ta = dg->reads[i][a] || dg->writes[i][a];
        for (int b = 0; ta && b < cj->nargs; b++)
            if ((dg->writes[i][a] || dg->writes[j][b]) && (dg->reads[j][b] || dg->writes[j][b]) &&
                same_storage(g, argbuf[i][a], argbuf[j][b], share_arena))
                return true;
    }
    return false;
}

static bool push(int **list, int *n, int v)
{
    int *p = realloc(*list, sizeof *p * (size_t)(*n + 1));
    if (!p)
        return false;
    p[(*n)++] = v;
    *list = p;
    return true;
}

/* Which arguments each function reads and writes, from the analysis. */
static bool access_sets(rt_dag *dg, diag *d)
{
    const ir_graph *g = &dg->m->graph;
    pass_stats *st = pass_analyze(dg->m, NULL, d);
    if (!st)
        return false;
    bool ok = true;
    for (int c = 0; c < g->ncalls && ok; c++) {
        const ir_graph_call *call = &g->calls[c];
        dg->reads[c] = calloc((size_t)call->nargs + 1, sizeof **dg->reads);
        dg->writes[c] = calloc((size_t)call->nargs + 1, sizeof **dg->writes);
        ok = dg->reads[c] && dg->writes[c];
        int fi = -1;
        for (int k = 0; k < dg->m->nfuncs; k++)
            if (dg->m->funcs[k] == call->fn)
                fi = k;
        if (!ok || fi < 0)
            break;
        const pass_funcinfo *f = &st->funcs[fi];
        pass_totals tot = {0};
        if (!pass_func_totals(st, fi, NULL, -1, &tot, d)) {
            ok = false;
            break;
        }
        uint64_t calls = f->ncalls > 0 ? (uint64_t)f->ncalls : 1;
        dg->nodes[c].flops = tot.flops / calls;
        for (int k = 0; k < f->nbufs; k++) {
            const pass_bufinfo *b = &f->bufs[k];
            if (b->param < 0 || b->param >= call->nargs)
                continue;
            dg->reads[c][b->param] |= b->read;
            dg->writes[c][b->param] |= b->written;
        }
    }
    pass_stats_free(st);
    if (!ok && !d->nerrors)
        diag_error(d, diag_noloc(), "out of memory");
    return ok;
}

rt_dag *rt_dag_build(const ir_module *m, bool share_arena, diag *d)
{
    const ir_graph *g = &m->graph;
    int n = g->ncalls;
    rt_dag *dg = calloc(1, sizeof *dg);
    int **argbuf = calloc((size_t)n + 1, sizeof *argbuf);
    size_t words = ((size_t)n + 63) / 64;
    uint64_t *anc = calloc((size_t)n * words + 1, sizeof *anc);   /* ancestors, a bitset per call */
    if (!dg || !argbuf || !anc) {
        free(dg);
        free(argbuf);
        free(anc);
        diag_error(d, diag_noloc(), "out of memory");
        return NULL;
    }
    dg->m = m;
    dg->ncalls = n;
    dg->nodes = calloc((size_t)n + 1, sizeof *dg->nodes);
    dg->reads = calloc((size_t)n + 1, sizeof *dg->reads);
    dg->writes = calloc((size_t)n + 1, sizeof *dg->writes);
    bool ok = dg->nodes && dg->reads && dg->writes;
    if (ok && !access_sets(dg, d))
        goto fail;
    for (int c = 0; ok && c < n; c++) {
        const ir_graph_call *call = &g->calls[c];
        ok = (argbuf[c] = calloc((size_t)call->nargs + 1, sizeof **argbuf)) != NULL;
        for (int a = 0; ok && a < call->nargs; a++) {
            if ((argbuf[c][a] = ir_graph_buffer_index(g, call->args[a])) < 0) {
                diag_internal(d, "runtime", "call %d to @%s passes a buffer that is not in the "
                              "graph", c, call->fn->name);
                goto fail;
            }
            uint64_t bytes = (uint64_t)ir_buffer_bytes(call->args[a]);
            if (dg->reads[c][a] || dg->writes[c][a])
                dg->nodes[c].bytes += bytes;
            if (dg->writes[c][a])
                dg->nodes[c].out_bytes += bytes;
        }
    }
    int *cand = calloc((size_t)n + 1, sizeof *cand);
    ok = ok && cand;
    for (int j = 0; ok && j < n; j++) {
        int ncand = 0;
        for (int i = j - 1; i >= 0; i--)
            if (depends(dg, (const int *const *)argbuf, i, j, share_arena))
                cand[ncand++] = i;
        uint64_t *aj = anc + (size_t)j * words;
        for (int k = 0; k < ncand; k++) {
            const uint64_t *ai = anc + (size_t)cand[k] * words;
            for (size_t w = 0; w < words; w++)
                aj[w] |= ai[w];
        }
        /* A candidate that is an ancestor of another is implied by it. */
        for (int k = ncand - 1; ok && k >= 0; k--) {
            int i = cand[k];
            if (aj[i / 64] >> (i % 64) & 1)
                continue;
            ok = push(&dg->nodes[j].preds, &dg->nodes[j].npreds, i) &&
                 push(&dg->nodes[i].succs, &dg->nodes[i].nsuccs, j);
            dg->nedges++;
        }
        for (int k = 0; k < ncand; k++)
            aj[cand[k] / 64] |= UINT64_C(1) << (cand[k] % 64);
    }
    free(cand);
    /* Successors were appended in increasing j: they are ascending. */
    if (!ok) {
        diag_error(d, diag_noloc(), "out of memory");
        goto fail;
    }
    for (int c = 0; c < n; c++)
        free(argbuf[c]);
    free(argbuf);
    free(anc);
    rt_dag_analyze(dg);
    return dg;
fail:
    for (int c = 0; c < n; c++)
        free(argbuf[c]);
    free(argbuf);
    free(anc);
    rt_dag_free(dg);
    return NULL;
}

/* Chains: a call continues its only predecessor's path when it is that
 * predecessor's only successor. */
static void find_paths(rt_dag *g)
{
    int n = g->ncalls;
    g->npaths = 0;
    for (int c = 0; c < n; c++) {
        rt_dag_node *x = &g->nodes[c];
        if (x->npreds == 1 && g->nodes[x->preds[0]].nsuccs == 1)
            x->path = g->nodes[x->preds[0]].path;
        else
            x->path = g->npaths++;
    }
    free(g->paths);
    free(g->path_calls);
    g->paths = calloc((size_t)g->npaths + 1, sizeof *g->paths);
    g->path_calls = calloc((size_t)n + 1, sizeof *g->path_calls);
    if (!g->paths || !g->path_calls) {   /* out of memory: no paths, one per call below */
        g->npaths = 0;
        return;
    }
    for (int c = 0; c < n; c++)
        g->paths[g->nodes[c].path].ncalls++;
    for (int p = 1; p < g->npaths; p++)
        g->paths[p].first = g->paths[p - 1].first + g->paths[p - 1].ncalls;
    int *fill = calloc((size_t)g->npaths + 1, sizeof *fill);
    if (!fill) {
        g->npaths = 0;
        return;
    }
    for (int c = 0; c < n; c++) {
        const rt_dag_path *p = &g->paths[g->nodes[c].path];
        g->path_calls[p->first + fill[g->nodes[c].path]++] = c;
    }
    free(fill);
}

void rt_dag_analyze(rt_dag *g)
{
    int n = g->ncalls;
    g->total_us = 0;
    g->nlevels = 0;
    for (int c = 0; c < n; c++) {
        rt_dag_node *x = &g->nodes[c];
        x->top_us = 0;
        x->level = 0;
        x->critical = false;
        for (int k = 0; k < x->npreds; k++) {
            const rt_dag_node *p = &g->nodes[x->preds[k]];
            x->top_us = fmax(x->top_us, p->top_us + p->cost_us);
            x->level = p->level + 1 > x->level ? p->level + 1 : x->level;
        }
        g->total_us += x->cost_us;
        g->nlevels = x->level + 1 > g->nlevels ? x->level + 1 : g->nlevels;
    }
    g->critical_us = 0;
    for (int c = n - 1; c >= 0; c--) {
        rt_dag_node *x = &g->nodes[c];
        double after = 0;
        for (int k = 0; k < x->nsuccs; k++)
            after = fmax(after, g->nodes[x->succs[k]].bottom_us);
        x->bottom_us = x->cost_us + after;
        g->critical_us = fmax(g->critical_us, x->top_us + x->bottom_us);
    }
    /* The widest level. */
    int *width = calloc((size_t)g->nlevels + 1, sizeof *width);
    g->max_width = n ? 1 : 0;
    for (int c = 0; width && c < n; c++)
        if (++width[g->nodes[c].level] > g->max_width)
            g->max_width = width[g->nodes[c].level];
    free(width);
    /* Mark one critical path: from a source starting it, follow a
     * successor whose remaining length is the rest of it. */
    double eps = 1e-9 * (g->critical_us + 1);
    int c = -1;
    for (int k = 0; k < n && c < 0; k++)
        if (g->nodes[k].npreds == 0 && fabs(g->nodes[k].bottom_us - g->critical_us) <= eps)
            c = k;
    while (c >= 0) {
        rt_dag_node *x = &g->nodes[c];
        x->critical = true;
        int next = -1;
        for (int k = 0; k < x->nsuccs && next < 0; k++)
            if (fabs(g->nodes[x->succs[k]].bottom_us - (x->bottom_us - x->cost_us)) <= eps)
                next = x->succs[k];
        c = next;
    }
    find_paths(g);
}

void rt_dag_free(rt_dag *g)
{
    if (!g)
        return;
    for (int c = 0; c < g->ncalls; c++) {
        if (g->nodes) {
            free(g->nodes[c].preds);
            free(g->nodes[c].succs);
        }
        if (g->reads)
            free(g->reads[c]);
        if (g->writes)
            free(g->writes[c]);
    }
    free(g->nodes);
    free(g->reads);
    free(g->writes);
    free(g->paths);
    free(g->path_calls);
    free(g);
}

const char *rt_dag_call_name(const rt_dag *g, int c)
{
    const ir_func *f = g->m->graph.calls[c].fn;
    const char *layer = ir_func_attr(f, "layer");
    return layer ? layer : f->name;
}

uint64_t rt_dag_edge_bytes(const rt_dag *g, int from, int to)
{
    const ir_graph_call *a = &g->m->graph.calls[from], *b = &g->m->graph.calls[to];
    uint64_t bytes = 0;
    for (int j = 0; j < b->nargs; j++) {
        if (!g->reads[to][j])
            continue;
        for (int i = 0; i < a->nargs; i++)
            if (g->writes[from][i] && a->args[i] == b->args[j]) {
                bytes += (uint64_t)ir_buffer_bytes(b->args[j]);
                break;
            }
    }
    return bytes;
}

void rt_dag_print_summary(FILE *out, const rt_dag *g)
{
    int oncrit = 0, longest = 0;
    for (int c = 0; c < g->ncalls; c++)
        oncrit += g->nodes[c].critical;
    for (int p = 0; p < g->npaths; p++)
        longest = g->paths[p].ncalls > longest ? g->paths[p].ncalls : longest;
    fprintf(out, "graph: %d calls, %d dependences, %d levels (at most %d calls at one level), "
            "%d fork-join paths (longest %d calls); critical path %d calls, %.1f us of %.1f us "
            "(parallelism %.2f)\n",
            g->ncalls, g->nedges, g->nlevels, g->max_width, g->npaths, longest, oncrit,
            g->critical_us, g->total_us, g->critical_us > 0 ? g->total_us / g->critical_us : 1.0);
}

/* A Graphviz double-quoted string. */
static void dot_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void dot_node(FILE *f, const rt_dag *g, int c, const int *device_of,
                     const char *const *device_names, const double *cost, bool critical)
{
    const char *op = ir_func_attr(g->m->graph.calls[c].fn, "op");
    char label[512];
    int k = snprintf(label, sizeof label, "%s\\n%s%s%.1f us", rt_dag_call_name(g, c),
                     op ? op : "", op ? "  " : "", cost[c]);
    if (device_of && k > 0 && (size_t)k < sizeof label)
        snprintf(label + k, sizeof label - (size_t)k, "\\n%s", device_names[device_of[c]]);
    fprintf(f, "    c%d [label=\"", c);
    /* the label's \n are Graphviz's line breaks: escape only quotes */
    for (const char *s = label; *s; s++) {
        if (*s == '"')
            fputc('\\', f);
        fputc(*s, f);
    }
    fprintf(f, "\"%s];\n", critical ? ", color=red, penwidth=2" : "");
}

/* The longest path under cost[] (calls are in a topological order):
 * *len its length, crit[c] whether c is on one, edge_crit(x, y) follows. */
static double longest_path(const rt_dag *g, const double *cost, double *bottom, bool *crit)
{
    double len = 0;
    for (int c = g->ncalls - 1; c >= 0; c--) {
        double b = 0;
        for (int i = 0; i < g->nodes[c].nsuccs; i++)
            b = fmax(b, bottom[g->nodes[c].succs[i]]);
        bottom[c] = b + cost[c];
    }
    double *top = calloc((size_t)g->ncalls + 1, sizeof *top);
    for (int c = 0; top && c < g->ncalls; c++) {
        for (int i = 0; i < g->nodes[c].npreds; i++) {
            int p = g->nodes[c].preds[i];
            top[c] = fmax(top[c], top[p] + cost[p]);
        }
        len = fmax(len, top[c] + bottom[c]);
    }
    for (int c = 0; top && c < g->ncalls; c++)
        crit[c] = fabs(top[c] + bottom[c] - len) <= 1e-9 * (len + 1);
    free(top);
    return len;
}

void rt_dag_write_dot(FILE *f, const rt_dag *g, const int *device_of,
                      const char *const *device_names, const double *placed_us)
{
    int n = g->ncalls;
    double *cost = calloc((size_t)n + 1, sizeof *cost), *bottom = calloc((size_t)n + 1, sizeof *bottom);
    bool *crit = calloc((size_t)n + 1, sizeof *crit);
    if (!cost || !bottom || !crit) {
        free(cost), free(bottom), free(crit);
        return;
    }
    for (int c = 0; c < n; c++)
        cost[c] = placed_us ? placed_us[c] : g->nodes[c].cost_us;
    double len = longest_path(g, cost, bottom, crit), total = 0;
    for (int c = 0; c < n; c++)
        total += cost[c];
    fputs("digraph ", f);
    dot_str(f, g->m->name && *g->m->name ? g->m->name : "network");
    fputs(" {\n    node [shape=box, fontsize=10];\n", f);
    if (placed_us)
        fprintf(f, "    label=\"each call's time on the device it is placed on; critical path "
                "%.1f us of %.1f us (red); with every call on the CPU %.1f us of %.1f us\";\n",
                len, total, g->critical_us, g->total_us);
    else
        fprintf(f, "    label=\"critical path %.1f us of %.1f us (red)\";\n", len, total);
    for (int p = 0; p < g->npaths; p++) {
        const rt_dag_path *path = &g->paths[p];
        if (path->ncalls > 1)
            fprintf(f, "  subgraph cluster_p%d {\n    label=\"path %d\"; style=dashed;\n", p, p);
        for (int k = 0; k < path->ncalls; k++) {
            int c = g->path_calls[path->first + k];
            dot_node(f, g, c, device_of, device_names, cost, crit[c]);
        }
        if (path->ncalls > 1)
            fputs("  }\n", f);
    }
    for (int c = 0; c < n; c++) {
        const rt_dag_node *x = &g->nodes[c];
        for (int k = 0; k < x->nsuccs; k++) {
            int y = x->succs[k];
            bool on = crit[c] && crit[y] &&
                      fabs(bottom[y] - (bottom[c] - cost[c])) <= 1e-9 * (len + 1);
            fprintf(f, "    c%d -> c%d%s;\n", c, y, on ? " [color=red, penwidth=2]" : "");
        }
    }
    fputs("}\n", f);
    free(cost), free(bottom), free(crit);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

bool rt_dag_dump(const rt_dag *g, const char *path, const int *device_of,
                 const char *const *device_names, const double *placed_us, diag *d)
{
    bool svg = ends_with(path, ".svg");
    size_t n = strlen(path) + 8;
    char *dotfile = malloc(n);
    if (!dotfile) {
        diag_error(d, diag_noloc(), "out of memory");
        return false;
    }
    /* FILE.svg is rendered from FILE.svg.dot, which is kept beside it. */
    snprintf(dotfile, n, "%s%s", path, svg ? ".dot" : "");
    FILE *f = fopen(dotfile, "w");
    bool ok = f != NULL;
    if (f) {
        rt_dag_write_dot(f, g, device_of, device_names, placed_us);
        ok = !ferror(f);
        ok = fclose(f) == 0 && ok;
    }
    if (!ok)
        diag_error(d, diag_noloc(), "--dump-graph: cannot write %s: %s", dotfile, strerror(errno));
    if (ok && svg) {
        char *argv[] = {"dot", "-Tsvg", "-o", (char *)path, dotfile, NULL};
        ok = rt_spawn_wait("--dump-graph", argv, "install Graphviz, or write FILE.dot", d);
    }
    free(dotfile);
    return ok;
}
