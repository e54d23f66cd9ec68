/* passes/schedule/util.c — finding loops and blocks, and rewriting accesses:
 * what every schedule primitive shares. */
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "passes/passes.h"
#include "passes/schedule/schedule.h"

void sch_error(sch_ctx *c, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_error(c->d, c->loc, "%s", msg);
}

/* The i-th child slot of s (NULL past the last). */
static ir_stmt **child_slot(ir_stmt *s, int i)
{
    ir_stmt **kids[3];
    int n = 0;
    switch (s->kind) {
    case IR_S_SEQ:
        return i < s->nbody ? &s->body[i] : NULL;
    case IR_S_BLOCK:
        if (s->init)
            kids[n++] = &s->init;
        if (s->nbody > 0)
            kids[n++] = &s->body[0];
        break;
    case IR_S_IF:
        if (s->nbody > 0)
            kids[n++] = &s->body[0];
        if (s->orelse)
            kids[n++] = &s->orelse;
        break;
    case IR_S_FOR: case IR_S_ALLOC: case IR_S_LET:
        if (s->nbody > 0)
            kids[n++] = &s->body[0];
        break;
    default:
        break;
    }
    return i < n ? kids[i] : NULL;
}

typedef bool (*match_fn)(const ir_stmt *s, const char *name);

static bool find(ir_stmt **slot, match_fn match, const char *name, sch_path *p)
{
    if (!*slot || p->n >= (int)(sizeof p->slot / sizeof p->slot[0]))
        return false;
    p->slot[p->n++] = slot;
    if (match(*slot, name))
        return true;
    ir_stmt **kid;
    for (int i = 0; (kid = child_slot(*slot, i)); i++)
        if (find(kid, match, name, p))
            return true;
    p->n--;
    return false;
}

static bool is_loop(const ir_stmt *s, const char *name)
{
    return s->kind == IR_S_FOR && s->var && strcmp(s->var->name, name) == 0;
}

static bool is_block(const ir_stmt *s, const char *name)
{
    return s->kind == IR_S_BLOCK && s->name && strcmp(s->name, name) == 0;
}

/* "i, j, k" for an error message. */
static void list_names(ir_stmt *s, bool loops, char *buf, size_t len)
{
    if (!s)
        return;
    const char *n = loops ? (s->kind == IR_S_FOR && s->var ? s->var->name : NULL)
                          : (s->kind == IR_S_BLOCK ? s->name : NULL);
    if (n) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", used ? ", " : "", n);
    }
    ir_stmt **kid;
    for (int i = 0; (kid = child_slot(s, i)); i++)
        list_names(*kid, loops, buf, len);
}

bool sch_find_loop(sch_ctx *c, const char *name, sch_path *p)
{
    p->n = 0;
    if (find(&c->f->body, is_loop, name, p))
        return true;
    char names[512] = "";
    list_names(c->f->body, true, names, sizeof names);
    sch_error(c, "no loop '%s' in @%s (its loops: %s)", name, c->f->name, names[0] ? names : "none");
    return false;
}

bool sch_find_block(sch_ctx *c, const char *name, sch_path *p)
{
    p->n = 0;
    if (find(&c->f->body, is_block, name, p))
        return true;
    char names[512] = "";
    list_names(c->f->body, false, names, sizeof names);
    sch_error(c, "no block '%s' in @%s (its blocks: %s)", name, c->f->name,
              names[0] ? names : "none");
    return false;
}

typedef struct used_ctx {
    const char *name;
    bool used;
} used_ctx;

static bool used_visit(const ir_stmt *s, void *p)
{
    used_ctx *u = p;
    if ((s->kind == IR_S_FOR || s->kind == IR_S_LET) && s->var && strcmp(s->var->name, u->name) == 0)
        u->used = true;
    if (s->kind == IR_S_BLOCK)
        for (int i = 0; i < s->niters; i++)
            if (s->iters[i].var && strcmp(s->iters[i].var->name, u->name) == 0)
                u->used = true;
    if (s->kind == IR_S_ALLOC && s->buf && strcmp(s->buf->name, u->name) == 0)
        u->used = true;
    return !u->used;
}

bool sch_name_used(const ir_func *f, const char *name)
{
    used_ctx u = {name, false};
    for (int i = 0; i < f->nparams; i++)
        if (strcmp(f->params[i]->name, name) == 0)
            return true;
    if (f->body)
        ir_stmt_walk(f->body, used_visit, NULL, &u);
    return u.used;
}

int64_t sch_extent(const ir_stmt *loop)
{
    if (!loop || loop->kind != IR_S_FOR || !loop->lo || !loop->hi || loop->lo->kind != IR_INT ||
        loop->hi->kind != IR_INT)
        return -1;
    return loop->hi->ival - loop->lo->ival;
}

/* ---------------------------------------------------------------- rewriting accesses */

typedef struct repl_ctx {
    ir_module *m;
    const ir_buffer *from;
    ir_buffer *to;
    ir_expr **idx;
    int nidx;
} repl_ctx;

static void repl_expr(repl_ctx *r, ir_expr *x)
{
    if (!x)
        return;
    if (x->kind == IR_LOAD && x->buf == r->from) {
        x->buf = r->to;
        x->args = ir_alloc(r->m->arena, sizeof(ir_expr *) * (size_t)(r->nidx ? r->nidx : 1));
        for (int i = 0; i < r->nidx; i++)
            x->args[i] = ir_expr_copy(r->m, r->idx[i]);
        x->nargs = r->nidx;
        return;
    }
    for (int i = 0; i < x->nargs; i++)
        repl_expr(r, x->args[i]);
    repl_expr(r, x->a);
    repl_expr(r, x->b);
    repl_expr(r, x->c);
}

static void repl_stmt(repl_ctx *r, ir_stmt *s)
{
    if (!s)
        return;
    if (s->kind == IR_S_STORE && s->buf == r->from) {
        s->buf = r->to;
        s->args = ir_alloc(r->m->arena, sizeof(ir_expr *) * (size_t)(r->nidx ? r->nidx : 1));
        for (int i = 0; i < r->nidx; i++)
            s->args[i] = ir_expr_copy(r->m, r->idx[i]);
        s->nargs = r->nidx;
    } else {
        for (int i = 0; i < s->nargs; i++)
            repl_expr(r, s->args[i]);
    }
    repl_expr(r, s->value);
    repl_expr(r, s->cond);
    repl_expr(r, s->lo);
    repl_expr(r, s->hi);
    for (int i = 0; i < s->nbody; i++)
        repl_stmt(r, s->body[i]);
    repl_stmt(r, s->init);
    repl_stmt(r, s->orelse);
}

void sch_replace_access(ir_module *m, ir_stmt *s, const ir_buffer *from, ir_buffer *to,
                        ir_expr **idx, int nidx)
{
    repl_ctx r = {m, from, to, idx, nidx};
    repl_stmt(&r, s);
}

void sch_update_blocks(ir_module *m, ir_stmt *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nbody; i++)
        sch_update_blocks(m, s->body[i]);
    sch_update_blocks(m, s->init);
    sch_update_blocks(m, s->orelse);
    if (s->kind == IR_S_BLOCK)
        ir_block_update_access(m, s);
}

ir_expr *sch_unbind(ir_module *m, const sch_path *p, const ir_expr *x)
{
    ir_expr *r = ir_expr_copy(m, x);
    /* innermost block first: its bindings may not use outer iteration
     * variables, but substituting inside-out is right either way */
    for (int k = p->n - 1; k >= 0; k--) {
        const ir_stmt *s = *p->slot[k];
        if (s->kind != IR_S_BLOCK)
            continue;
        for (int i = 0; i < s->niters; i++) {
            ir_var *from[1] = {s->iters[i].var};
            ir_expr *to[1] = {s->iters[i].binding};
            r = ir_expr_subst(m, r, from, to, 1);
        }
    }
    return r;
}

/* ---------------------------------------------------------------- ranges */

void sch_path_ranges(const sch_path *p, int upto, ir_var_range *r, int *n)
{
    *n = 0;
    for (int k = 0; k < upto && k < p->n; k++) {
        const ir_stmt *s = *p->slot[k];
        int64_t e = sch_extent(s);
        if (s->kind == IR_S_FOR && e > 0 && *n < SCH_RANGES_MAX)
            r[(*n)++] = (ir_var_range){s->var, s->lo->ival, s->hi->ival - 1};
    }
}

bool sch_block_named(const ir_stmt *s, const char *name)
{
    if (!s)
        return false;
    if (s->kind == IR_S_BLOCK && s->name && strcmp(s->name, name) == 0)
        return true;
    for (int i = 0; i < s->nbody; i++)
        if (sch_block_named(s->body[i], name))
            return true;
    return sch_block_named(s->init, name) || sch_block_named(s->orelse, name);
}

const char *sch_fresh_name(ir_module *m, const ir_func *f, const char *base)
{
    if (!sch_name_used(f, base))
        return base;
    for (int i = 1;; i++) {
        const char *n = ir_sprintf(m->arena, "%s_%d", base, i);
        if (!sch_name_used(f, n))
            return n;
    }
}

const char *sch_expr_text(ir_module *m, const ir_expr *x)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return "?";
    ir_print_expr(f, x);
    fclose(f);
    const char *r = ir_strdup(m->arena, buf ? buf : "?");
    free(buf);
    return r;
}
