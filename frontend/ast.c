/* frontend/ast.c — syntax-tree constructors and span helpers. */
#include "frontend/ast.h"

#include <ctype.h>
#include <string.h>

fe_vec *fe_vec_new(ir_arena *a)
{
    return ir_alloc(a, sizeof(fe_vec));
}

void fe_vec_push(ir_arena *a, fe_vec *v, void *item)
{
    IR_PUSH(a, v->v, v->n, v->cap, item);
}

fe_expr *fe_expr_new(ir_arena *a, fe_expr_kind k, fe_span sp)
{
    fe_expr *e = ir_alloc(a, sizeof *e);
    e->kind = k;
    e->span = sp;
    e->opspan = sp;
    return e;
}

fe_stmt *fe_stmt_new(ir_arena *a, fe_stmt_kind k, fe_span sp)
{
    fe_stmt *s = ir_alloc(a, sizeof *s);
    s->kind = k;
    s->span = sp;
    return s;
}

fe_span fe_span_join(fe_span a, fe_span b)
{
    fe_span r = a;
    if (b.end > r.end)
        r.end = b.end;
    return r;
}

diag_loc fe_loc(fe_span sp)
{
    diag_loc l = {sp.file ? sp.file->name : NULL, sp.line, sp.col};
    return l;
}

const char *fe_span_text(ir_arena *a, fe_span sp)
{
    if (!sp.file || sp.off < 0 || sp.end <= sp.off || (size_t)sp.end > sp.file->len)
        return "";
    const char *s = sp.file->text + sp.off;
    int n = sp.end - sp.off;
    char *out = ir_alloc(a, (size_t)n + 1);
    int k = 0;
    bool space = false;
    for (int i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '#') {            /* a comment inside a multi-line span */
            while (i + 1 < n && s[i + 1] != '\n')
                i++;
            space = true;
            continue;
        }
        if (isspace(c)) {
            space = true;
            continue;
        }
        if (space && k > 0)
            out[k++] = ' ';
        space = false;
        out[k++] = (char)c;
    }
    out[k] = 0;
    return out;
}

const char *fe_op_text(fe_op op)
{
    static const char *const t[] = {"+", "-", "*", "/", "%", "==", "!=", "<", "<=",
                                    ">", ">=", "&&", "||", "-", "!"};
    return t[op];
}

const char *fe_assign_op_text(fe_assign_op op)
{
    static const char *const t[] = {"=", "+=", "*=", "max=", "min="};
    return t[op];
}

bool fe_is_view_op(const char *name)
{
    static const char *ops[] = {"reshape", "flatten", "permute", "transpose", "slice"};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (strcmp(name, ops[i]) == 0)
            return true;
    return false;
}
