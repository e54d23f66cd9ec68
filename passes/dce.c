/* passes/dce.c — dead code elimination.
 *
 * Removes what cannot affect a function's parameters:
 *   - stores to LOCAL buffers (allocations) that nothing in the function
 *     ever loads — their values are lost when the allocation ends;
 *   - stores of a location's own value (B[i] = B[i]);
 *   - allocations whose buffer is no longer accessed at all;
 *   - LETs whose variable is unused;
 *   - loops, blocks, lets, ifs and sequences left with nothing to do.
 * Stores to parameters, EVALs (profiling calls) and ASSERTs always stay.
 * Removing a store can make another buffer's loads disappear, so the pass
 * repeats until nothing changes.
 *
 * Removal can only drop work, including loads that would have failed at run
 * time; it never adds any.
 */
#include "passes/passes.h"

/* The pass's state for one function: LOCAL buffers that some expression
 * loads, and whether this round removed anything. */
typedef struct dce_ctx {
    ir_module *m;
    ir_buffer **read;
    int nread, capread;
    bool changed;
} dce_ctx;

static bool note_load(const ir_expr *e, void *p)
{
    dce_ctx *c = p;
    if (e->kind == IR_LOAD && e->buf->role == IR_BUF_LOCAL) {
        for (int i = 0; i < c->nread; i++)
            if (c->read[i] == e->buf)
                return true;
        IR_PUSH(c->m->arena, c->read, c->nread, c->capread, e->buf);
    }
    return true;
}

static bool is_read(const dce_ctx *c, const ir_buffer *b)
{
    for (int i = 0; i < c->nread; i++)
        if (c->read[i] == b)
            return true;
    return false;
}

bool pass_is_empty(const ir_stmt *s)
{
    if (!s)
        return true;
    if (s->kind != IR_S_SEQ)
        return false;
    for (int i = 0; i < s->nbody; i++)
        if (!pass_is_empty(s->body[i]))
            return false;
    return true;
}

/* Whether a statement mentions a variable or a buffer, for the unused-LET
 * and unused-ALLOC rules. */
typedef struct use_ctx {
    const ir_var *var;
    const ir_buffer *buf;
    bool found;
} use_ctx;

static bool use_expr(const ir_expr *e, void *p)
{
    use_ctx *u = p;
    if ((u->var && e->kind == IR_VAR && e->var == u->var) ||
        (u->buf && e->kind == IR_LOAD && e->buf == u->buf))
        u->found = true;
    return !u->found;
}

static bool use_stmt(const ir_stmt *s, void *p)
{
    use_ctx *u = p;
    if (u->buf && s->kind == IR_S_STORE && s->buf == u->buf)
        u->found = true;
    return !u->found;
}

static bool stmt_uses(const ir_stmt *s, const ir_var *v, const ir_buffer *b)
{
    use_ctx u = {v, b, false};
    ir_stmt_walk(s, use_stmt, use_expr, &u);
    return u.found;
}

static ir_stmt *removed(dce_ctx *c)
{
    c->changed = true;
    return ir_seq(c->m, NULL, 0);
}

static bool is_self_store(const ir_stmt *s)
{
    const ir_expr *v = s->value;
    if (v->kind != IR_LOAD || v->buf != s->buf || v->nargs != s->nargs)
        return false;
    for (int i = 0; i < s->nargs; i++)
        if (!ir_expr_equal(v->args[i], s->args[i]))
            return false;
    return true;
}

static ir_stmt *dce_stmt(dce_ctx *c, ir_stmt *s);

static ir_stmt *dce_seq(dce_ctx *c, ir_stmt *s)
{
    int n = 0;
    for (int i = 0; i < s->nbody; i++) {
        ir_stmt *r = dce_stmt(c, s->body[i]);
        if (!pass_is_empty(r))
            s->body[n++] = r;
    }
    if (n != s->nbody)
        c->changed = true;
    s->nbody = n;
    return s;
}

static ir_stmt *dce_block(dce_ctx *c, ir_stmt *s)
{
    if (s->init) {
        s->init = dce_stmt(c, s->init);
        if (pass_is_empty(s->init))
            s->init = NULL;
    }
    s->body[0] = dce_stmt(c, s->body[0]);
    if (!s->init && pass_is_empty(s->body[0]))
        return removed(c);
    pass_update_block_access(c->m, s);
    return s;
}

static ir_stmt *dce_if(dce_ctx *c, ir_stmt *s)
{
    s->body[0] = dce_stmt(c, s->body[0]);
    if (s->orelse) {
        s->orelse = dce_stmt(c, s->orelse);
        if (pass_is_empty(s->orelse)) {
            s->orelse = NULL;
            c->changed = true;
        }
    }
    if (!pass_is_empty(s->body[0]))
        return s;
    if (!s->orelse)
        return removed(c);
    /* Only the else branch does something: if !cond { else }. */
    s->cond = ir_unary(c->m, IR_NOT, s->cond);
    s->body[0] = s->orelse;
    s->orelse = NULL;
    c->changed = true;
    return s;
}

static ir_stmt *dce_stmt(dce_ctx *c, ir_stmt *s)
{
    switch (s->kind) {
    case IR_S_SEQ:
        return dce_seq(c, s);
    case IR_S_FOR:
        s->body[0] = dce_stmt(c, s->body[0]);
        return pass_is_empty(s->body[0]) ? removed(c) : s;
    case IR_S_BLOCK:
        return dce_block(c, s);
    case IR_S_STORE:
        if ((s->buf->role == IR_BUF_LOCAL && !is_read(c, s->buf)) || is_self_store(s))
            return removed(c);
        return s;
    case IR_S_PREFETCH:   /* a hint for a later read: none if nothing reads the buffer */
        return s->buf->role == IR_BUF_LOCAL && !is_read(c, s->buf) ? removed(c) : s;
    case IR_S_ALLOC:
        s->body[0] = dce_stmt(c, s->body[0]);
        if (pass_is_empty(s->body[0]))
            return removed(c);
        if (!stmt_uses(s->body[0], NULL, s->buf)) {
            c->changed = true;
            return s->body[0];
        }
        return s;
    case IR_S_LET:
        s->body[0] = dce_stmt(c, s->body[0]);
        if (pass_is_empty(s->body[0]))
            return removed(c);
        if (!stmt_uses(s->body[0], s->var, NULL)) {
            c->changed = true;
            return s->body[0];
        }
        return s;
    case IR_S_IF:
        return dce_if(c, s);
    default:   /* EVAL and ASSERT have effects */
        return s;
    }
}

bool pass_dce(ir_module *m, diag *d)
{
    (void)d;
    for (int i = 0; i < m->nfuncs; i++) {
        ir_func *f = m->funcs[i];
        if (!f->body)
            continue;
        dce_ctx c = {.m = m};
        do {
            c.nread = 0;
            c.changed = false;
            ir_stmt_walk(f->body, NULL, note_load, &c);
            f->body = dce_stmt(&c, f->body);
        } while (c.changed);
    }
    return true;
}
