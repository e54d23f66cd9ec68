/* ir/vector.c — vector IR back to scalars, for the interpreter.
 *
 * passes/vectorize.c turns `vectorized` loops into loops that step by the
 * vector's lanes and compute ramps, broadcasts and vector loads and stores
 * (ir/ir.h).  The interpreter computes scalars; rather than teach every
 * node of it a second, vector form, a function holding vector IR runs as
 * its scalar equivalent, which this file builds:
 *
 *   for v in lo..hi step S { B }
 *       => let v.lo = lo { for v.k in 0..floordiv(hi - v.lo + S - 1, S) {
 *              let v = v.lo + v.k * S { B } } }
 *   let t: f32x4 = X { B }  =>  let t.0 = X lane 0 { ... let t.3 = X lane 3 { B } }
 *   A[I] = X  (X of L lanes)
 *       =>  let tec.0 = X lane 0 ... let tec.L-1 = X lane L-1 { A[I lane 0] = tec.0 ... }
 *
 * Lane l of ramp(a, b, L) is a + b*l, of broadcast(a, L) is a, of a vector
 * let its l-th scalar, and of any other node the node over its operands'
 * lane l (a scalar operand is the same in every lane).  A store computes
 * all its lanes before it stores any, as the C vector store does.
 */
#include "ir/interp.h"
#include "ir/ir.h"

#include <stdio.h>
#include <string.h>

/* A vector let's scalars. */
typedef struct lanes_of {
    const ir_var *vec;
    ir_var **lane;
} lanes_of;

typedef struct scalarizer {
    ir_module *m;
    lanes_of *vars;
    int nvars, capvars;
} scalarizer;

static ir_expr *lane(scalarizer *z, const ir_expr *e, int l)
{
    if (!e)
        return NULL;
    if (ir_expr_lanes(e) == 1)
        return ir_expr_copy(z->m, e);
    switch (e->kind) {
    case IR_RAMP:
        return ir_binary(z->m, IR_ADD, ir_expr_copy(z->m, e->a),
                         ir_binary(z->m, IR_MUL, ir_expr_copy(z->m, e->b),
                                   ir_int_typed(z->m, l, e->a->dtype)));
    case IR_BROADCAST:
        return ir_expr_copy(z->m, e->a);
    case IR_VAR:
        for (int i = z->nvars - 1; i >= 0; i--)
            if (z->vars[i].vec == e->var)
                return ir_varref(z->m, z->vars[i].lane[l]);
        return ir_expr_copy(z->m, e);   /* unbound: the interpreter reports it */
    default: {
        ir_expr *c = ir_alloc(z->m->arena, sizeof *c);
        *c = *e;
        c->lanes = 0;
        if (e->nargs) {
            c->args = ir_alloc(z->m->arena, sizeof *c->args * (size_t)e->nargs);
            for (int i = 0; i < e->nargs; i++)
                c->args[i] = lane(z, e->args[i], l);
        }
        c->a = lane(z, e->a, l);
        c->b = lane(z, e->b, l);
        c->c = lane(z, e->c, l);
        return c;
    }
    }
}

static ir_stmt *scalarize(scalarizer *z, const ir_stmt *s);

static ir_var *lane_var(scalarizer *z, const char *name, ir_dtype t, int l)
{
    char buf[32];
    snprintf(buf, sizeof buf, ".%d", l);
    ir_var *v = ir_var_new(z->m, name, t);
    v->name = ir_sprintf(z->m->arena, "%s%s", name, buf);
    return v;
}

/* Lanes values[0..L) as nested lets around body (built inside out). */
static ir_stmt *wrap_lets(scalarizer *z, ir_var **vars, const ir_expr *value, int lanes,
                          ir_stmt *body)
{
    for (int l = lanes - 1; l >= 0; l--)
        body = ir_let(z->m, vars[l], lane(z, value, l), body);
    return body;
}

static ir_stmt *scalarize_store(scalarizer *z, const ir_stmt *s)
{
    int lanes = ir_expr_lanes(s->value);
    ir_var **vals = ir_alloc(z->m->arena, sizeof *vals * (size_t)lanes);
    ir_stmt *seq = ir_seq_new(z->m);
    for (int l = 0; l < lanes; l++) {
        vals[l] = lane_var(z, "tec", s->buf->dtype, l);
        ir_expr **idx = ir_alloc(z->m->arena, sizeof *idx * (size_t)(s->nargs ? s->nargs : 1));
        for (int i = 0; i < s->nargs; i++)
            idx[i] = lane(z, s->args[i], l);
        ir_seq_append(z->m, seq, ir_store(z->m, s->buf, idx, s->nargs, ir_varref(z->m, vals[l])));
    }
    return wrap_lets(z, vals, s->value, lanes, seq);
}

static ir_stmt *scalarize_let(scalarizer *z, const ir_stmt *s)
{
    int lanes = ir_var_lanes(s->var);
    ir_var **vars = ir_alloc(z->m->arena, sizeof *vars * (size_t)lanes);
    for (int l = 0; l < lanes; l++)
        vars[l] = lane_var(z, s->var->name, s->var->dtype, l);
    IR_PUSH(z->m->arena, z->vars, z->nvars, z->capvars, ((lanes_of){s->var, vars}));
    ir_stmt *body = scalarize(z, s->nbody ? s->body[0] : NULL);
    z->nvars--;
    return wrap_lets(z, vars, s->value, lanes, body ? body : ir_seq_new(z->m));
}

static ir_stmt *scalarize_for(scalarizer *z, const ir_stmt *s)
{
    ir_module *m = z->m;
    int64_t step = ir_for_step(s);
    ir_var *lo = ir_var_new(m, s->var->name, IR_I64), *k = ir_var_new(m, s->var->name, IR_I64);
    lo->name = ir_sprintf(m->arena, "%s.lo", s->var->name);
    k->name = ir_sprintf(m->arena, "%s.k", s->var->name);
    ir_expr *trip = ir_binary(m, IR_FLOORDIV,
                              ir_binary(m, IR_ADD, ir_binary(m, IR_SUB, ir_expr_copy(m, s->hi),
                                                             ir_varref(m, lo)),
                                        ir_int(m, step - 1)),
                              ir_int(m, step));
    ir_expr *v = ir_binary(m, IR_ADD, ir_varref(m, lo),
                           ir_binary(m, IR_MUL, ir_varref(m, k), ir_int(m, step)));
    ir_stmt *body = scalarize(z, s->nbody ? s->body[0] : NULL);
    ir_stmt *inner = ir_let(m, s->var, v, body ? body : ir_seq_new(m));
    ir_stmt *loop = ir_for(m, k, ir_int(m, 0), trip, s->for_kind, inner);
    return ir_let(m, lo, ir_expr_copy(m, s->lo), loop);
}

static ir_stmt *scalarize(scalarizer *z, const ir_stmt *s)
{
    if (!s)
        return NULL;
    if (s->kind == IR_S_FOR && ir_for_step(s) > 1)
        return scalarize_for(z, s);
    if (s->kind == IR_S_LET && ir_var_lanes(s->var) > 1)
        return scalarize_let(z, s);
    if (s->kind == IR_S_STORE && ir_expr_lanes(s->value) > 1)
        return scalarize_store(z, s);
    /* a statement of scalars: its expressions as they are, its bodies done */
    ir_stmt *c = ir_alloc(z->m->arena, sizeof *c);
    *c = *s;
    if (s->nbody) {
        c->body = ir_alloc(z->m->arena, sizeof *c->body * (size_t)s->nbody);
        c->capbody = s->nbody;
        for (int i = 0; i < s->nbody; i++)
            c->body[i] = scalarize(z, s->body[i]);
    }
    c->init = scalarize(z, s->init);
    c->orelse = scalarize(z, s->orelse);
    return c;
}

bool ir_interp_vector_func(const ir_func *f, void *const *data, char *err, size_t errlen)
{
    ir_module *m = ir_module_new("scalarized");
    scalarizer z = {.m = m};
    ir_func *g = ir_func_new(m, f->name);
    g->params = f->params;
    g->nparams = f->nparams;
    g->attrs = f->attrs;
    g->nattrs = f->nattrs;
    g->body = scalarize(&z, f->body);
    bool ok = ir_interp_func(g, data, err, errlen);
    ir_module_free(m);
    return ok;
}
