/* ir/ir.c — arena, node tables, builder and tree utilities of the loop IR. */
#include "ir/ir.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- arena */

/* A chain of chunks; allocations never move, and the whole module is freed
 * at once, so passes may drop nodes without tracking them. */
typedef struct ir_chunk {
    struct ir_chunk *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
} ir_chunk;

struct ir_arena {
    ir_chunk *head;
};

void ir_out_of_memory(void)
{
    fputs("tec: error: out of memory\n", stderr);
    exit(1);
}

ir_arena *ir_arena_new(void)
{
    ir_arena *a = calloc(1, sizeof *a);
    if (!a)
        ir_out_of_memory();
    return a;
}

void ir_arena_free(ir_arena *a)
{
    if (!a)
        return;
    for (ir_chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(a);
}

void *ir_alloc(ir_arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    ir_chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t cap = size > 65536 ? size : 65536;
        c = malloc(sizeof *c + cap);
        if (!c)
            ir_out_of_memory();
        c->size = cap;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

char *ir_strndup(ir_arena *a, const char *s, size_t n)
{
    char *p = ir_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *ir_strdup(ir_arena *a, const char *s)
{
    return s ? ir_strndup(a, s, strlen(s)) : NULL;
}

char *ir_sprintf(ir_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = ir_alloc(a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void *ir_grow(ir_arena *a, void *arr, size_t elem, int n, int *cap)
{
    int ncap = *cap < 4 ? 4 : *cap * 2;
    if (ncap <= n)
        ncap = n + 1;
    void *p = ir_alloc(a, elem * (size_t)ncap);
    if (arr && n > 0)
        memcpy(p, arr, elem * (size_t)n);
    *cap = ncap;
    return p;
}

/* ---------------------------------------------------------------- tables */

static const struct {
    const char *name, *ctype;
    int size;
} dtype_table[] = {
#define X(e, t, c, s) {t, c, s},
    IR_DTYPES(X)
#undef X
};

const char *ir_dtype_name(ir_dtype t) { return dtype_table[t].name; }
const char *ir_dtype_ctype(ir_dtype t) { return dtype_table[t].ctype; }
int ir_dtype_size(ir_dtype t) { return dtype_table[t].size; }

bool ir_dtype_is_float(ir_dtype t)
{
    return t == IR_F16 || t == IR_BF16 || t == IR_F32 || t == IR_F64;
}

bool ir_dtype_is_int(ir_dtype t)
{
    return t == IR_I8 || t == IR_U8 || t == IR_I16 || t == IR_I32 || t == IR_I64;
}

bool ir_dtype_is_small_int(ir_dtype t) { return t == IR_I8 || t == IR_U8 || t == IR_I16; }

bool ir_dtype_int_range(ir_dtype t, int64_t *lo, int64_t *hi)
{
    switch (t) {
    case IR_BOOL: *lo = 0; *hi = 1; return true;
    case IR_I8: *lo = INT8_MIN; *hi = INT8_MAX; return true;
    case IR_U8: *lo = 0; *hi = UINT8_MAX; return true;
    case IR_I16: *lo = INT16_MIN; *hi = INT16_MAX; return true;
    case IR_I32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
    case IR_I64: *lo = INT64_MIN; *hi = INT64_MAX; return true;
    default: return false;
    }
}

int64_t ir_int_wrap(ir_dtype t, int64_t v)
{
    uint64_t u = (uint64_t)v;
    switch (t) {
    case IR_BOOL: return v != 0;
    case IR_I8: return (int8_t)(uint8_t)u;
    case IR_U8: return (uint8_t)u;
    case IR_I16: return (int16_t)(uint16_t)u;
    case IR_I32: return (int32_t)(uint32_t)u;
    default: return v;
    }
}

bool ir_dtype_parse(const char *name, ir_dtype *out)
{
    for (int i = 0; i < IR_NDTYPES; i++)
        if (strcmp(name, dtype_table[i].name) == 0) {
            *out = (ir_dtype)i;
            return true;
        }
    return false;
}

static const struct {
    const char *name;
    int arity;
    char cls;
} expr_table[] = {
#define X(e, t, n, c) {t, n, c},
    IR_EXPR_KINDS(X)
#undef X
};

const char *ir_expr_kind_name(ir_expr_kind k) { return expr_table[k].name; }
int ir_expr_kind_arity(ir_expr_kind k) { return expr_table[k].arity; }
char ir_expr_kind_class(ir_expr_kind k) { return expr_table[k].cls; }

static const struct {
    const char *name;
    int arity;
    char cls;
} intrin_table[] = {
#define X(e, n, a, c) {n, a, c},
    IR_INTRINSICS(X)
#undef X
};

const char *ir_intrin_name(ir_intrin f) { return intrin_table[f].name; }
int ir_intrin_arity(ir_intrin f) { return intrin_table[f].arity; }
char ir_intrin_class(ir_intrin f) { return intrin_table[f].cls; }

bool ir_intrin_parse(const char *name, ir_intrin *out)
{
    for (int i = 0; i < IR_NINTRINSICS; i++)
        if (strcmp(name, intrin_table[i].name) == 0) {
            *out = (ir_intrin)i;
            return true;
        }
    return false;
}

#define NAME_TABLE(fn, type, LIST)                 \
    const char *fn(type k)                         \
    {                                              \
        static const char *const names[] = {LIST(X)}; \
        return names[k];                           \
    }
#define X(e, t) t,
NAME_TABLE(ir_buf_role_name, ir_buf_role, IR_BUF_ROLES)
NAME_TABLE(ir_scope_name, ir_scope, IR_SCOPES)
NAME_TABLE(ir_stmt_kind_name, ir_stmt_kind, IR_STMT_KINDS)
NAME_TABLE(ir_for_kind_name, ir_for_kind, IR_FOR_KINDS)
NAME_TABLE(ir_iter_kind_name, ir_iter_kind, IR_ITER_KINDS)
#undef X
#undef NAME_TABLE

/* ---------------------------------------------------------------- module, functions, buffers */

ir_module *ir_module_new(const char *name)
{
    ir_arena *a = ir_arena_new();
    ir_module *m = ir_alloc(a, sizeof *m);
    m->arena = a;
    m->name = ir_strdup(a, name ? name : "module");
    return m;
}

void ir_module_free(ir_module *m)
{
    if (m)
        ir_arena_free(m->arena);
}

#define PUSH(m, arr, n, cap, item) IR_PUSH((m)->arena, arr, n, cap, item)

ir_func *ir_func_new(ir_module *m, const char *name)
{
    ir_func *f = ir_alloc(m->arena, sizeof *f);
    f->name = ir_strdup(m->arena, name);
    PUSH(m, m->funcs, m->nfuncs, m->capfuncs, f);
    return f;
}

ir_func *ir_module_find_func(const ir_module *m, const char *name)
{
    for (int i = 0; i < m->nfuncs; i++)
        if (strcmp(m->funcs[i]->name, name) == 0)
            return m->funcs[i];
    return NULL;
}

void ir_func_set_attr(ir_module *m, ir_func *f, const char *key, const char *value)
{
    for (int i = 0; i < f->nattrs; i++)
        if (strcmp(f->attrs[i].key, key) == 0) {
            f->attrs[i].value = ir_strdup(m->arena, value);
            return;
        }
    ir_attr a = {ir_strdup(m->arena, key), ir_strdup(m->arena, value)};
    PUSH(m, f->attrs, f->nattrs, f->capattrs, a);
}

const char *ir_func_attr(const ir_func *f, const char *key)
{
    for (int i = 0; i < f->nattrs; i++)
        if (strcmp(f->attrs[i].key, key) == 0)
            return f->attrs[i].value;
    return NULL;
}

ir_buffer *ir_buffer_new(ir_module *m, const char *name, ir_dtype t, int ndim,
                         const int64_t *shape, ir_buf_role role)
{
    ir_buffer *b = ir_alloc(m->arena, sizeof *b);
    b->name = ir_strdup(m->arena, name);
    b->dtype = t;
    b->ndim = ndim;
    b->shape = ir_alloc(m->arena, sizeof(int64_t) * (size_t)(ndim ? ndim : 1));
    if (ndim)
        memcpy(b->shape, shape, sizeof(int64_t) * (size_t)ndim);
    b->role = role;
    b->scope = IR_SCOPE_GLOBAL;
    return b;
}

int64_t ir_buffer_numel(const ir_buffer *b)
{
    int64_t n = 1;
    for (int i = 0; i < b->ndim; i++)
        n *= b->shape[i];
    return n;
}

void ir_func_add_param(ir_module *m, ir_func *f, ir_buffer *b)
{
    PUSH(m, f->params, f->nparams, f->capparams, b);
}

void ir_graph_add_buffer(ir_module *m, ir_buffer *b)
{
    PUSH(m, m->graph.bufs, m->graph.nbufs, m->graph.capbufs, b);
}

int64_t ir_buffer_bytes(const ir_buffer *b)
{
    if ((unsigned)b->dtype >= IR_NDTYPES || b->ndim < 0 || (b->ndim && !b->shape))
        return -1;
    int64_t n = ir_dtype_size(b->dtype);
    for (int i = 0; i < b->ndim; i++)
        if (b->shape[i] < 0 || __builtin_mul_overflow(n, b->shape[i], &n))
            return -1;
    return n;
}

int ir_graph_buffer_index(const ir_graph *g, const ir_buffer *b)
{
    for (int i = 0; i < g->nbufs; i++)
        if (g->bufs[i] == b)
            return i;
    return -1;
}

void ir_graph_live_ranges(const ir_graph *g, int *first, int *last)
{
    for (int i = 0; i < g->nbufs; i++)
        first[i] = last[i] = -1;
    for (int c = 0; c < g->ncalls; c++)
        for (int a = 0; a < g->calls[c].nargs; a++) {
            int i = g->calls[c].args ? ir_graph_buffer_index(g, g->calls[c].args[a]) : -1;
            if (i < 0)
                continue;
            if (first[i] < 0)
                first[i] = c;
            last[i] = c;
        }
}

ir_buffer *ir_graph_find_buffer(const ir_module *m, const char *name)
{
    for (int i = 0; i < m->graph.nbufs; i++)
        if (strcmp(m->graph.bufs[i]->name, name) == 0)
            return m->graph.bufs[i];
    return NULL;
}

static ir_graph_call new_call(ir_module *m, ir_func *f, ir_buffer **args, int nargs)
{
    ir_graph_call c = {f, ir_alloc(m->arena, sizeof(ir_buffer *) * (size_t)(nargs ? nargs : 1)), nargs};
    if (nargs)
        memcpy(c.args, args, sizeof(ir_buffer *) * (size_t)nargs);
    return c;
}

void ir_graph_add_call(ir_module *m, ir_func *f, ir_buffer **args, int nargs)
{
    PUSH(m, m->graph.calls, m->graph.ncalls, m->graph.capcalls, new_call(m, f, args, nargs));
}

void ir_graph_add_load(ir_module *m, ir_func *f, ir_buffer **args, int nargs)
{
    PUSH(m, m->graph.loads, m->graph.nloads, m->graph.caploads, new_call(m, f, args, nargs));
}

ir_var *ir_var_new(ir_module *m, const char *name, ir_dtype t)
{
    ir_var *v = ir_alloc(m->arena, sizeof *v);
    v->name = ir_strdup(m->arena, name);
    v->dtype = t;
    return v;
}

/* ---------------------------------------------------------------- expressions */

static ir_expr *expr_new(ir_module *m, ir_expr_kind k, ir_dtype t)
{
    ir_expr *e = ir_alloc(m->arena, sizeof *e);
    e->kind = k;
    e->dtype = t;
    return e;
}

static ir_expr **expr_array(ir_module *m, ir_expr **src, int n)
{
    ir_expr **a = ir_alloc(m->arena, sizeof(ir_expr *) * (size_t)(n ? n : 1));
    if (n)
        memcpy(a, src, sizeof(ir_expr *) * (size_t)n);
    return a;
}

ir_expr *ir_int(ir_module *m, int64_t v) { return ir_int_typed(m, v, IR_I64); }

ir_expr *ir_int_typed(ir_module *m, int64_t v, ir_dtype t)
{
    ir_expr *e = expr_new(m, IR_INT, t);
    e->ival = ir_int_wrap(t, v);
    return e;
}

ir_expr *ir_float(ir_module *m, double v, ir_dtype t)
{
    ir_expr *e = expr_new(m, IR_FLOAT, t);
    e->fval = t == IR_F32 ? (double)(float)v : v;
    return e;
}

ir_expr *ir_varref(ir_module *m, ir_var *v)
{
    ir_expr *e = expr_new(m, IR_VAR, v->dtype);
    e->var = v;
    e->lanes = v->lanes;
    return e;
}

ir_expr *ir_load(ir_module *m, ir_buffer *b, ir_expr **idx, int n)
{
    ir_expr *e = expr_new(m, IR_LOAD, b->dtype);
    e->buf = b;
    e->args = expr_array(m, idx, n);
    e->nargs = n;
    for (int i = 0; i < n; i++)
        if (ir_expr_lanes(idx[i]) > ir_expr_lanes(e))
            e->lanes = idx[i]->lanes;
    return e;
}

static bool kind_gives_bool(ir_expr_kind k)
{
    switch (k) {
    case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE:
    case IR_AND: case IR_OR: case IR_NOT:
        return true;
    default:
        return false;
    }
}

ir_expr *ir_binary(ir_module *m, ir_expr_kind k, ir_expr *a, ir_expr *b)
{
    ir_expr *e = expr_new(m, k, kind_gives_bool(k) ? IR_BOOL : a->dtype);
    e->a = a;
    e->b = b;
    e->lanes = a->lanes > b->lanes ? a->lanes : b->lanes;
    return e;
}

ir_expr *ir_unary(ir_module *m, ir_expr_kind k, ir_expr *a)
{
    ir_expr *e = expr_new(m, k, kind_gives_bool(k) ? IR_BOOL : a->dtype);
    e->a = a;
    e->lanes = a->lanes;
    return e;
}

ir_expr *ir_select(ir_module *m, ir_expr *cond, ir_expr *a, ir_expr *b)
{
    ir_expr *e = expr_new(m, IR_SELECT, a->dtype);
    e->c = cond;
    e->a = a;
    e->b = b;
    e->lanes = a->lanes;
    return e;
}

ir_expr *ir_cast(ir_module *m, ir_expr *a, ir_dtype t)
{
    if (a->dtype == t)
        return a;
    ir_expr *e = expr_new(m, IR_CAST, t);
    e->a = a;
    e->lanes = a->lanes;
    return e;
}

ir_expr *ir_call(ir_module *m, ir_intrin fn, ir_expr **args, int n)
{
    ir_dtype t = ir_intrin_class(fn) == 'r' || n == 0 ? IR_I32 : args[0]->dtype;
    ir_expr *e = expr_new(m, IR_CALL, t);
    e->fn = fn;
    e->args = expr_array(m, args, n);
    e->nargs = n;
    e->lanes = n > 0 ? args[0]->lanes : 0;
    return e;
}

ir_expr *ir_ramp(ir_module *m, ir_expr *base, ir_expr *stride, int lanes)
{
    ir_expr *e = expr_new(m, IR_RAMP, base->dtype);
    e->a = base;
    e->b = stride;
    e->lanes = lanes;
    return e;
}

ir_expr *ir_broadcast(ir_module *m, ir_expr *x, int lanes)
{
    ir_expr *e = expr_new(m, IR_BROADCAST, x->dtype);
    e->a = x;
    e->lanes = lanes;
    return e;
}

ir_expr *ir_lanes(ir_module *m, ir_expr **xs, int lanes)
{
    ir_expr *e = expr_new(m, IR_LANES, xs[0]->dtype);
    e->args = expr_array(m, xs, lanes);
    e->nargs = lanes;
    e->lanes = lanes;
    return e;
}

const char *ir_vtype_name(ir_dtype t, int lanes, char *buf, size_t size)
{
    const char *name = (unsigned)t < IR_NDTYPES ? ir_dtype_name(t) : "?";
    if (lanes > 1)
        snprintf(buf, size, "%sx%d", name, lanes);
    else
        snprintf(buf, size, "%s", name);
    return buf;
}

bool ir_vtype_parse(const char *name, ir_dtype *t, int *lanes)
{
    *lanes = 1;
    if (ir_dtype_parse(name, t))
        return true;
    const char *x = strrchr(name, 'x');
    if (!x || x == name || x[1] < '1' || x[1] > '9' || strlen(x + 1) > 2)
        return false;
    char base[16];
    size_t n = (size_t)(x - name);
    if (n >= sizeof base)
        return false;
    memcpy(base, name, n);
    base[n] = 0;
    char *end;
    long l = strtol(x + 1, &end, 10);
    if (*end || l < 2 || l > IR_MAX_LANES || !ir_dtype_parse(base, t))
        return false;
    *lanes = (int)l;
    return true;
}

static bool has_vectors_visit(const ir_expr *e, void *p)
{
    if (ir_expr_lanes(e) > 1)
        *(bool *)p = true;
    return !*(bool *)p;
}

static bool has_vectors_stmt(const ir_stmt *s, void *p)
{
    if ((s->kind == IR_S_FOR && ir_for_step(s) > 1) ||
        (s->kind == IR_S_LET && ir_var_lanes(s->var) > 1))
        *(bool *)p = true;
    return !*(bool *)p;
}

bool ir_func_has_vectors(const ir_func *f)
{
    bool found = false;
    if (f)
        ir_stmt_walk(f->body, has_vectors_stmt, has_vectors_visit, &found);
    return found;
}

/* ---------------------------------------------------------------- statements */

static ir_stmt *stmt_new(ir_module *m, ir_stmt_kind k)
{
    ir_stmt *s = ir_alloc(m->arena, sizeof *s);
    s->kind = k;
    return s;
}

static void set_body(ir_module *m, ir_stmt *s, ir_stmt *body)
{
    s->body = ir_alloc(m->arena, sizeof(ir_stmt *));
    s->body[0] = body;
    s->nbody = 1;
}

ir_stmt *ir_seq(ir_module *m, ir_stmt **stmts, int n)
{
    ir_stmt *s = stmt_new(m, IR_S_SEQ);
    s->body = ir_alloc(m->arena, sizeof(ir_stmt *) * (size_t)(n ? n : 1));
    if (n)
        memcpy(s->body, stmts, sizeof(ir_stmt *) * (size_t)n);
    s->nbody = n;
    return s;
}

ir_stmt *ir_seq_new(ir_module *m) { return stmt_new(m, IR_S_SEQ); }

void ir_seq_append(ir_module *m, ir_stmt *seq, ir_stmt *s)
{
    PUSH(m, seq->body, seq->nbody, seq->capbody, s);
}

ir_stmt *ir_for(ir_module *m, ir_var *v, ir_expr *lo, ir_expr *hi,
                ir_for_kind k, ir_stmt *body)
{
    ir_stmt *s = stmt_new(m, IR_S_FOR);
    s->var = v;
    s->lo = lo;
    s->hi = hi;
    s->for_kind = k;
    set_body(m, s, body);
    return s;
}

ir_stmt *ir_block(ir_module *m, const char *name, ir_itervar *iters, int niters,
                  ir_stmt *init, ir_stmt *body)
{
    ir_stmt *s = stmt_new(m, IR_S_BLOCK);
    s->name = ir_strdup(m->arena, name);
    s->iters = ir_alloc(m->arena, sizeof(ir_itervar) * (size_t)(niters ? niters : 1));
    if (niters)
        memcpy(s->iters, iters, sizeof(ir_itervar) * (size_t)niters);
    s->niters = niters;
    s->init = init;
    set_body(m, s, body);
    ir_block_update_access(m, s);
    return s;
}

ir_stmt *ir_store(ir_module *m, ir_buffer *b, ir_expr **idx, int n, ir_expr *value)
{
    ir_stmt *s = stmt_new(m, IR_S_STORE);
    s->buf = b;
    s->args = expr_array(m, idx, n);
    s->nargs = n;
    s->value = value;
    return s;
}

ir_stmt *ir_alloc_stmt(ir_module *m, ir_buffer *b, ir_stmt *body)
{
    ir_stmt *s = stmt_new(m, IR_S_ALLOC);
    s->buf = b;
    set_body(m, s, body);
    return s;
}

ir_stmt *ir_let(ir_module *m, ir_var *v, ir_expr *value, ir_stmt *body)
{
    ir_stmt *s = stmt_new(m, IR_S_LET);
    s->var = v;
    s->value = value;
    set_body(m, s, body);
    return s;
}

ir_stmt *ir_if(ir_module *m, ir_expr *cond, ir_stmt *then, ir_stmt *orelse)
{
    ir_stmt *s = stmt_new(m, IR_S_IF);
    s->cond = cond;
    s->orelse = orelse;
    set_body(m, s, then);
    return s;
}

ir_stmt *ir_eval(ir_module *m, ir_expr *call)
{
    ir_stmt *s = stmt_new(m, IR_S_EVAL);
    s->value = call;
    return s;
}

ir_stmt *ir_assert(ir_module *m, ir_expr *cond, const char *msg)
{
    ir_stmt *s = stmt_new(m, IR_S_ASSERT);
    s->cond = cond;
    s->msg = ir_strdup(m->arena, msg);
    return s;
}

ir_stmt *ir_prefetch(ir_module *m, ir_buffer *b, ir_expr **idx, int n)
{
    ir_stmt *s = stmt_new(m, IR_S_PREFETCH);
    s->buf = b;
    s->args = expr_array(m, idx, n);
    s->nargs = n;
    return s;
}

/* ---------------------------------------------------------------- walks */

void ir_expr_walk(const ir_expr *e, ir_expr_visit_fn fn, void *ctx)
{
    if (!e || !fn(e, ctx))
        return;
    for (int i = 0; i < e->nargs; i++)
        ir_expr_walk(e->args[i], fn, ctx);
    ir_expr_walk(e->c, fn, ctx);
    ir_expr_walk(e->a, fn, ctx);
    ir_expr_walk(e->b, fn, ctx);
}

static void walk_exprs(ir_expr *const *es, int n, ir_expr_visit_fn fn, void *ctx)
{
    for (int i = 0; i < n; i++)
        ir_expr_walk(es[i], fn, ctx);
}

void ir_stmt_walk(const ir_stmt *s, ir_stmt_visit_fn stmt_fn,
                  ir_expr_visit_fn expr_fn, void *ctx)
{
    if (!s)
        return;
    if (stmt_fn && !stmt_fn(s, ctx))
        return;
    if (expr_fn) {
        ir_expr_walk(s->lo, expr_fn, ctx);
        ir_expr_walk(s->hi, expr_fn, ctx);
        for (int i = 0; i < s->niters; i++)
            ir_expr_walk(s->iters[i].binding, expr_fn, ctx);
        walk_exprs(s->args, s->nargs, expr_fn, ctx);
        ir_expr_walk(s->value, expr_fn, ctx);
        ir_expr_walk(s->cond, expr_fn, ctx);
    }
    ir_stmt_walk(s->init, stmt_fn, expr_fn, ctx);
    for (int i = 0; i < s->nbody; i++)
        ir_stmt_walk(s->body[i], stmt_fn, expr_fn, ctx);
    ir_stmt_walk(s->orelse, stmt_fn, expr_fn, ctx);
}

/* Collects buffers in first-appearance order for ir_block_update_access. */
typedef struct access_ctx {
    ir_module *m;
    ir_buffer **reads, **writes;
    int nreads, nwrites, capr, capw;
} access_ctx;

static void add_unique(ir_module *m, ir_buffer ***arr, int *n, int *cap, ir_buffer *b)
{
    for (int i = 0; i < *n; i++)
        if ((*arr)[i] == b)
            return;
    IR_PUSH(m->arena, *arr, *n, *cap, b);
}

static bool access_expr(const ir_expr *e, void *p)
{
    access_ctx *c = p;
    if (e->kind == IR_LOAD)
        add_unique(c->m, &c->reads, &c->nreads, &c->capr, e->buf);
    return true;
}

static bool access_stmt(const ir_stmt *s, void *p)
{
    access_ctx *c = p;
    if (s->kind == IR_S_STORE)
        add_unique(c->m, &c->writes, &c->nwrites, &c->capw, s->buf);
    return true;
}

void ir_block_update_access(ir_module *m, ir_stmt *block)
{
    access_ctx c = {.m = m};
    ir_stmt_walk(block->init, access_stmt, access_expr, &c);
    for (int i = 0; i < block->nbody; i++)
        ir_stmt_walk(block->body[i], access_stmt, access_expr, &c);
    block->reads = c.reads;
    block->nreads = c.nreads;
    block->writes = c.writes;
    block->nwrites = c.nwrites;
}

bool ir_block_own_index(const ir_stmt *b, ir_expr *const *idx, int n)
{
    if (n != b->niters)
        return false;
    for (int d = 0; d < n; d++) {
        bool same = idx[d]->kind == IR_VAR && idx[d]->var == b->iters[d].var;
        bool unit = b->iters[d].extent == 1 && ir_expr_is_int(idx[d], 0);
        if (!same && !unit)
            return false;
    }
    return true;
}

/* ---------------------------------------------------------------- copy, substitute, compare */

ir_expr *ir_expr_subst(ir_module *m, const ir_expr *e, ir_var **from,
                       ir_expr **to, int n)
{
    if (!e)
        return NULL;
    if (e->kind == IR_VAR)
        for (int i = 0; i < n; i++)
            if (from[i] == e->var)
                return ir_expr_copy(m, to[i]);
    ir_expr *c = expr_new(m, e->kind, e->dtype);
    *c = *e;
    if (e->nargs || e->args) {
        c->args = ir_alloc(m->arena, sizeof(ir_expr *) * (size_t)(e->nargs ? e->nargs : 1));
        for (int i = 0; i < e->nargs; i++)
            c->args[i] = ir_expr_subst(m, e->args[i], from, to, n);
    }
    c->a = ir_expr_subst(m, e->a, from, to, n);
    c->b = ir_expr_subst(m, e->b, from, to, n);
    c->c = ir_expr_subst(m, e->c, from, to, n);
    return c;
}

ir_expr *ir_expr_copy(ir_module *m, const ir_expr *e)
{
    return ir_expr_subst(m, e, NULL, NULL, 0);
}

ir_stmt *ir_stmt_copy(ir_module *m, const ir_stmt *s)
{
    return ir_stmt_subst(m, s, NULL, NULL, 0);
}

static ir_stmt *stmt_subst_opt(ir_module *m, const ir_stmt *s, ir_var **from, ir_expr **to, int n)
{
    return s ? ir_stmt_subst(m, s, from, to, n) : NULL;
}

ir_stmt *ir_stmt_subst(ir_module *m, const ir_stmt *s, ir_var **from, ir_expr **to, int n)
{
    ir_stmt *c = stmt_new(m, s->kind);
    *c = *s;
    c->body = ir_alloc(m->arena, sizeof(ir_stmt *) * (size_t)(s->nbody ? s->nbody : 1));
    for (int i = 0; i < s->nbody; i++)
        c->body[i] = ir_stmt_subst(m, s->body[i], from, to, n);
    c->capbody = s->nbody ? s->nbody : 1;
    c->lo = s->lo ? ir_expr_subst(m, s->lo, from, to, n) : NULL;
    c->hi = s->hi ? ir_expr_subst(m, s->hi, from, to, n) : NULL;
    if (s->niters) {
        c->iters = ir_alloc(m->arena, sizeof(ir_itervar) * (size_t)s->niters);
        for (int i = 0; i < s->niters; i++) {
            c->iters[i] = s->iters[i];
            c->iters[i].binding = ir_expr_subst(m, s->iters[i].binding, from, to, n);
        }
    }
    if (s->nargs) {
        c->args = ir_alloc(m->arena, sizeof(ir_expr *) * (size_t)s->nargs);
        for (int i = 0; i < s->nargs; i++)
            c->args[i] = ir_expr_subst(m, s->args[i], from, to, n);
    }
    c->value = s->value ? ir_expr_subst(m, s->value, from, to, n) : NULL;
    c->cond = s->cond ? ir_expr_subst(m, s->cond, from, to, n) : NULL;
    c->init = stmt_subst_opt(m, s->init, from, to, n);
    c->orelse = stmt_subst_opt(m, s->orelse, from, to, n);
    if (s->kind == IR_S_BLOCK) {   /* the lists may grow: give them their own storage */
        c->reads = ir_alloc(m->arena, sizeof(ir_buffer *) * (size_t)(s->nreads ? s->nreads : 1));
        c->writes = ir_alloc(m->arena, sizeof(ir_buffer *) * (size_t)(s->nwrites ? s->nwrites : 1));
        for (int i = 0; i < s->nreads; i++)
            c->reads[i] = s->reads[i];
        for (int i = 0; i < s->nwrites; i++)
            c->writes[i] = s->writes[i];
    }
    return c;
}

bool ir_expr_equal(const ir_expr *a, const ir_expr *b)
{
    if (a == b)
        return true;
    if (!a || !b || a->kind != b->kind || a->dtype != b->dtype || a->nargs != b->nargs ||
        ir_expr_lanes(a) != ir_expr_lanes(b))
        return false;
    switch (a->kind) {
    case IR_INT:
        return a->ival == b->ival;
    case IR_FLOAT:
        /* Bitwise, so that NaN equals NaN and 0.0 differs from -0.0. */
        return memcmp(&a->fval, &b->fval, sizeof a->fval) == 0;
    case IR_VAR:
        return a->var == b->var;
    case IR_LOAD:
        if (a->buf != b->buf)
            return false;
        break;
    case IR_CALL:
        if (a->fn != b->fn)
            return false;
        break;
    default:
        break;
    }
    for (int i = 0; i < a->nargs; i++)
        if (!ir_expr_equal(a->args[i], b->args[i]))
            return false;
    return ir_expr_equal(a->a, b->a) && ir_expr_equal(a->b, b->b) &&
           ir_expr_equal(a->c, b->c);
}

typedef struct stores_ctx {
    const ir_buffer *b;
    bool found;
} stores_ctx;

static bool stores_visit(const ir_stmt *s, void *p)
{
    stores_ctx *c = p;
    if (s->kind == IR_S_STORE && s->buf == c->b)
        c->found = true;
    return !c->found;
}

bool ir_expr_loads(const ir_expr *e, const ir_buffer *b)
{
    if (!e)
        return false;
    if (e->kind == IR_LOAD && e->buf == b)
        return true;
    for (int i = 0; i < e->nargs; i++)
        if (e->args && ir_expr_loads(e->args[i], b))
            return true;
    return ir_expr_loads(e->a, b) || ir_expr_loads(e->b, b) || ir_expr_loads(e->c, b);
}

ir_access ir_stmt_first_access(const ir_stmt *s, const ir_buffer *b)
{
    if (!s)
        return IR_ACCESS_NONE;
    if (ir_expr_loads(s->lo, b) || ir_expr_loads(s->hi, b) || ir_expr_loads(s->cond, b))
        return IR_ACCESS_LOAD;
    for (int i = 0; i < s->niters; i++)
        if (s->iters && ir_expr_loads(s->iters[i].binding, b))
            return IR_ACCESS_LOAD;
    if (s->kind == IR_S_STORE) {
        for (int i = 0; i < s->nargs; i++)
            if (ir_expr_loads(s->args[i], b))
                return IR_ACCESS_LOAD;
        if (ir_expr_loads(s->value, b))
            return IR_ACCESS_LOAD;
        return s->buf == b ? IR_ACCESS_STORE : IR_ACCESS_NONE;
    }
    if (s->kind == IR_S_PREFETCH) {   /* a hint: neither reads nor defines its element */
        for (int i = 0; i < s->nargs; i++)
            if (ir_expr_loads(s->args[i], b))
                return IR_ACCESS_LOAD;
        return IR_ACCESS_NONE;
    }
    if (ir_expr_loads(s->value, b))   /* LET, EVAL */
        return IR_ACCESS_LOAD;
    ir_access a = ir_stmt_first_access(s->init, b);
    for (int i = 0; a == IR_ACCESS_NONE && i < s->nbody; i++)
        a = ir_stmt_first_access(s->body[i], b);
    if (a == IR_ACCESS_NONE)
        a = ir_stmt_first_access(s->orelse, b);
    return a;
}

bool ir_stmt_stores_to(const ir_stmt *s, const ir_buffer *b)
{
    stores_ctx c = {b, false};
    ir_stmt_walk(s, stores_visit, NULL, &c);
    return c.found;
}

typedef struct uses_ctx {
    const ir_var *v;
    bool found;
} uses_ctx;

static bool uses_visit(const ir_expr *e, void *p)
{
    uses_ctx *c = p;
    if (e->kind == IR_VAR && e->var == c->v)
        c->found = true;
    return !c->found;
}

bool ir_expr_uses_var(const ir_expr *e, const ir_var *v)
{
    uses_ctx c = {v, false};
    ir_expr_walk(e, uses_visit, &c);
    return c.found;
}

bool ir_expr_is_int(const ir_expr *e, int64_t v)
{
    return e && e->kind == IR_INT && e->ival == v;
}
