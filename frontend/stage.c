/* frontend/stage.c — stages, layers and graph buffers (stage.h): which
 * temporaries a def still reads after a stage (its references, computed
 * once), layer and graph-buffer names, and closing a stage: the
 * temporaries still needed get graph buffers and become the function's
 * outputs, the stage is lowered (lower.c) and called from the graph. */
#include "frontend/stage.h"

#include <stdlib.h>
#include <string.h>

#include "frontend/lower.h"

/* ---------------------------------------------------------------- references (which temporaries escape) */

static void refs_expr(fe_ctx *c, fe_def *d, const fe_expr *x)
{
    if (!x)
        return;
    if (x->kind == FE_E_NAME || x->kind == FE_E_ACCESS) {
        fe_ref r = {x->name, x->span.off};
        IR_PUSH(c->a, d->refs, d->nrefs, d->caprefs, r);
    }
    refs_expr(c, d, x->a);
    refs_expr(c, d, x->b);
    refs_expr(c, d, x->c);
    refs_expr(c, d, x->dflt);
    for (int i = 0; i < x->nidx; i++)
        refs_expr(c, d, x->idx[i]);
    for (int i = 0; i < x->nargs; i++)
        refs_expr(c, d, x->args[i].value);
}

static void refs_stmts(fe_ctx *c, fe_def *d, fe_stmt **ss, int n)
{
    for (int i = 0; i < n; i++) {
        const fe_stmt *s = ss[i];
        if (s->kind == FE_S_OUTPUT) {
            fe_expr x = {.kind = FE_E_NAME, .name = s->name, .span = s->name_span};
            refs_expr(c, d, &x);
        }
        refs_expr(c, d, s->value);
        refs_expr(c, d, s->lo);
        refs_expr(c, d, s->hi);
        refs_expr(c, d, s->cond);
        refs_stmts(c, d, s->body, s->nbody);
        refs_stmts(c, d, s->orelse, s->norelse);
    }
}

static int ref_order(const void *pa, const void *pb)
{
    const fe_ref *a = pa, *b = pb;
    int k = strcmp(a->name, b->name);
    return k ? k : (a->off > b->off) - (a->off < b->off);
}

/* The def's references, computed once (the program uses a pseudo-def),
 * sorted by name and then offset. */
void fe_def_refs(fe_ctx *c, fe_def *d)
{
    if (d->refs_done)
        return;
    d->refs_done = true;
    refs_stmts(c, d, d->body, d->nbody);
    if (d->nrefs > 1)
        qsort(d->refs, (size_t)d->nrefs, sizeof *d->refs, ref_order);
}

/* Is name referenced at offset off or later?  Its last reference (by
 * binary search in the sorted references) says. */
static bool referenced_after(const fe_inst *in, const char *name, int off)
{
    int lo = 0, hi = in->nrefs;   /* the first reference of a greater name */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (strcmp(in->refs[mid].name, name) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && in->refs[lo - 1].off >= off && strcmp(in->refs[lo - 1].name, name) == 0;
}

/* Is t needed after offset off: referenced later under its own name or
 * under any other name bound to it (`u = t`)? */
static bool needed_after(const fe_inst *in, const fe_tensor *t, int off)
{
    if (referenced_after(in, t->name, off))
        return true;
    for (int i = 0; i < in->env->n; i++) {
        const fe_binding *b = &in->env->b[i];
        if (b->name && b->v.kind == FE_V_TENSOR && b->v.t == t && referenced_after(in, b->name, off))
            return true;
    }
    return false;
}

/* ---------------------------------------------------------------- layers and graph buffers */

const char *fe_join_name(fe_ctx *c, const char *prefix, const char *name)
{
    return *prefix ? ir_sprintf(c->a, "%s.%s", prefix, name) : name;
}

/* Claims a layer name; false (after an error naming both places) if it
 * is taken. */
bool fe_claim_layer(fe_ctx *c, const char *layer, fe_span loc)
{
    fe_span *first = fe_map_get(&c->layers, layer);
    if (first) {
        fe_error(c, loc, "duplicate layer name '%s' (first used at %s)", layer, fe_loc_str(c, *first));
        if (first->file)
            fe_note(c, *first, "layer '%s' was first named here", layer);
        return false;
    }
    fe_span *at = ir_alloc(c->a, sizeof *at);
    *at = loc;
    fe_map_put(c->a, &c->layers, layer, at);
    return true;
}

const char *fe_claim_free_layer(fe_ctx *c, const char *base, fe_span loc)
{
    const char *s = base;
    for (int k = 1; fe_map_get(&c->layers, s); k++)
        s = k == 1 ? ir_sprintf(c->a, "%s.copy", base) : ir_sprintf(c->a, "%s.copy%d", base, k);
    fe_claim_layer(c, s, loc);
    return s;
}

ir_buffer *fe_find_buffer(fe_ctx *c, const char *name) { return fe_map_get(&c->bufs, name); }

/* Adds b to the graph (its name must be free). */
void fe_add_buffer(fe_ctx *c, ir_buffer *b)
{
    ir_graph_add_buffer(c->m, b);
    fe_map_put(c->a, &c->bufs, b->name, b);
}

void fe_rename_buffer(fe_ctx *c, ir_buffer *b, const char *name)
{
    fe_map_del(&c->bufs, b->name);
    b->name = ir_strdup(c->m->arena, name);
    fe_map_put(c->a, &c->bufs, b->name, b);
}

/* A free name for a TEMP graph buffer: base, else base.out, base.out2 ... */
const char *fe_free_buffer_name(fe_ctx *c, const char *base)
{
    if (!fe_find_buffer(c, base))
        return base;
    const char *s = ir_sprintf(c->a, "%s.out", base);
    for (int k = 2; fe_find_buffer(c, s); k++)
        s = ir_sprintf(c->a, "%s.out%d", base, k);
    return s;
}

/* Makes `name` free for an input or param: a TEMP buffer holding it moves
 * aside (temporaries' names matter to nobody).  False if a buffer whose
 * name matters has it. */
bool fe_reserve_name(fe_ctx *c, const char *name)
{
    ir_buffer *b = fe_find_buffer(c, name);
    if (!b)
        return true;
    if (b->role != IR_BUF_TEMP)
        return false;
    fe_rename_buffer(c, b, fe_free_buffer_name(c, name));
    return true;
}

static ir_buffer *temp_buffer(fe_ctx *c, const char *base, fe_tensor *t)
{
    ir_buffer *b = ir_buffer_new(c->m, fe_free_buffer_name(c, base), t->dtype, t->ndim, t->shape,
                                 IR_BUF_TEMP);
    fe_add_buffer(c, b);
    return b;
}

/* ---------------------------------------------------------------- stages */

static void poison_tensor(fe_env *e, const fe_tensor *t)
{
    for (int i = 0; i < e->n; i++)
        if (e->b[i].v.kind == FE_V_TENSOR && e->b[i].v.t == t)
            e->b[i].v = fe_poison();
}

void fe_add_sarg(fe_ctx *c, fe_sarg **arr, int *n, int *cap, fe_tensor *t, const char *name)
{
    fe_sarg s = {t, name};
    IR_PUSH(c->a, *arr, *n, *cap, s);
}

static bool has_sarg(const fe_sarg *arr, int n, const fe_tensor *t)
{
    for (int i = 0; i < n; i++)
        if (arr[i].t == t)
            return true;
    return false;
}

static const char *free_func_name(fe_ctx *c, const char *base)
{
    const char *s = base;
    for (int k = 1; fe_map_get(&c->funcs, s); k++)
        s = ir_sprintf(c->a, "%s.%d", base, k);
    return s;
}

/* Is t bound to one of the outputs of in's def? */
static bool def_output_of(fe_inst *in, const fe_tensor *t)
{
    for (int j = 0; in->def && j < in->def->nouts; j++) {
        fe_binding *b = fe_env_find_local(in->env, in->def->outs[j].name);
        if (b && b->v.kind == FE_V_TENSOR && b->v.t == t)
            return true;
    }
    return false;
}

/* Adds t's storage to a stage's parameters, once: a view passes the
 * buffer it reads (named after the tensor it views). */
static void add_param(fe_ctx *c, fe_sarg **arr, int *n, int *cap, fe_tensor *t, const char *name)
{
    fe_tensor *s = fe_storage(t);
    if (!has_sarg(*arr, *n, s))
        fe_add_sarg(c, arr, n, cap, s, t->view ? t->view->src_name : name);
}

void fe_give_buffer(fe_ctx *c, fe_tensor *t, const char *base)
{
    t->buf = temp_buffer(c, base, t);
}

void fe_emit_stage(fe_ctx *c, const fe_stage *st, const char *layer, const char *op,
                   fe_span loc, const fe_sarg *params, int np)
{
    ir_func *f = ir_func_new(c->m, free_func_name(c, layer));
    fe_map_put(c->a, &c->funcs, f->name, f);
    ir_func_set_attr(c->m, f, "layer", layer);
    ir_func_set_attr(c->m, f, "op", op);
    ir_func_set_attr(c->m, f, "loc", fe_loc_str(c, loc));
    fe_lower_stage(c->m, f, st, params, np, op);
    ir_buffer **args = ir_alloc(c->a, sizeof(ir_buffer *) * (size_t)(np ? np : 1));
    for (int i = 0; i < np; i++)
        args[i] = params[i].t->buf;
    ir_graph_add_call(c->m, f, args, np);
}

/* Ends the open stage of `in`: decides which temporaries the rest of the
 * program still needs (they get graph buffers and become outputs of the
 * stage's function), lowers the stage and adds its call to the graph. */
void fe_close_stage(fe_ctx *c, fe_inst *in)
{
    fe_stage *st = in->stage;
    if (!st)
        return;
    in->stage = NULL;

    bool kernel = in->def && !in->def->has_calls;
    fe_tensor *first_out = NULL;
    fe_sarg *outs = NULL;
    int nouts = 0, capouts = 0;
    for (int i = 0; i < st->ndefined; i++) {
        fe_tensor *t = st->defined[i];
        t->stage = NULL;
        if (st->poisoned) {
            poison_tensor(in->env, t);
            t->dead = true;
            continue;
        }
        bool is_out = def_output_of(in, t);
        if (!is_out && !needed_after(in, t, st->end_off)) {
            t->dead = true;
            continue;
        }
        /* the result of a def of one output is named after the layer */
        const char *base = is_out && in->def->nouts == 1 ? in->layer : fe_join_name(c, in->layer, t->name);
        t->buf = temp_buffer(c, base, t);
        if (!first_out)
            first_out = t;
        fe_add_sarg(c, &outs, &nouts, &capouts, t, t->name);
    }
    if (st->poisoned)
        return;
    if (!first_out) {
        diag_warning(c->d, fe_loc(st->loc), "'%s' is computed but never used",
                     st->ndefined ? st->defined[0]->name : "?");
        return;
    }
    const char *layer = kernel ? in->layer : fe_join_name(c, in->layer, first_out->name);
    if (!kernel && !fe_claim_layer(c, layer, st->loc))
        return;

    fe_sarg *params = NULL;
    int np = 0, cap = 0;
    if (kernel) {
        for (int i = 0; i < in->ninputs; i++)
            add_param(c, &params, &np, &cap, in->inputs[i].t, in->inputs[i].name);
        for (int i = 0; i < in->nweights; i++)
            add_param(c, &params, &np, &cap, in->weights[i].t, in->weights[i].name);
    }
    /* Graph values the stage reads: activations first, then weights. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < st->nuses; i++) {
            fe_sarg u = st->uses[i];
            bool w = u.t->buf && u.t->buf->role == IR_BUF_PARAM;
            if (w == (pass == 1))
                add_param(c, &params, &np, &cap, u.t, u.name);
        }
    for (int i = 0; i < nouts; i++)
        fe_add_sarg(c, &params, &np, &cap, outs[i].t, outs[i].name);
    fe_emit_stage(c, st, layer, in->op, kernel ? in->call : st->loc, params, np);
}

