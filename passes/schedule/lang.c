/* passes/schedule/lang.c — the schedule language: parsing, printing, and
 * the `schedule` pass that applies a function's schedule.
 *
 *   schedule  = { line } ;
 *   line      = [ results "=" ] primitive "(" arg { "," arg } ")" [ "#" comment ] NEWLINE ;
 *   results   = name { "," name } ;
 *   arg       = name | integer ;
 *
 * doc/schedule.md lists the primitives. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "passes/schedule/schedule.h"

static const struct { const char *name; int nargs, nresults; } kinds[] = {
#define X(e, n, a, r) {n, a, r},
    SCH_KINDS(X)
#undef X
};

const char *sch_kind_name(sch_kind k) { return kinds[k].name; }

typedef struct lexer {
    ir_module *m;
    diag *d;
    const char *s;
    diag_loc loc;       /* of *s */
    bool ok;
} lexer;

static void advance(lexer *x)
{
    if (*x->s == '\n') {
        x->loc.line++;
        x->loc.col = 1;
    } else
        x->loc.col++;
    x->s++;
}

static void blanks(lexer *x)
{
    while (*x->s == ' ' || *x->s == '\t' || *x->s == '\r')
        advance(x);
    if (*x->s == '#')
        while (*x->s && *x->s != '\n')
            advance(x);
}

static char *word(lexer *x)
{
    const char *b = x->s;
    while (isalnum((unsigned char)*x->s) || *x->s == '_' || *x->s == '.')
        advance(x);
    return ir_strndup(x->m->arena, b, (size_t)(x->s - b));
}

static void skip_line(lexer *x)
{
    while (*x->s && *x->s != '\n')
        advance(x);
}

static void syntax(lexer *x, const char *fmt, const char *arg)
{
    diag_error(x->d, x->loc, fmt, arg);
    x->ok = false;
    skip_line(x);
}

static const char *tok_text(const lexer *x, char *buf, size_t n)
{
    if (!*x->s || *x->s == '\n')
        return "end of line";
    snprintf(buf, n, "'%c'", *x->s);
    return buf;
}

/* One line; false at the end of the text. */
/* The arguments after '(', up to and including ')': names and integers;
 * false after a syntax error. */
static bool parse_args(lexer *x, sch_step *st)
{
    char tb[8];
    for (;;) {
        blanks(x);
        if (st->nargs == 32) {
            syntax(x, "schedule: too many arguments (at most %s)", "32");
            return false;
        }
        if (isdigit((unsigned char)*x->s) || *x->s == '-') {
            char *end;
            long long v = strtoll(x->s, &end, 10);
            st->ints[st->nargs++] = v;
            while (x->s < end)
                advance(x);
        } else if (isalpha((unsigned char)*x->s) || *x->s == '_') {
            st->args[st->nargs++] = word(x);
        } else {
            syntax(x, "schedule: expected a name or a number, found %s", tok_text(x, tb, sizeof tb));
            return false;
        }
        blanks(x);
        if (*x->s == ',') {
            advance(x);
            continue;
        }
        if (*x->s == ')') {
            advance(x);
            break;
        }
        syntax(x, "schedule: expected ',' or ')', found %s", tok_text(x, tb, sizeof tb));
        return false;
    }
    return true;
}

/* An unknown primitive: the nearest known one, or the list of them. */
static void unknown_primitive(lexer *x, const char *prim, diag_loc ploc)
{
    const char *names[SCH_NKINDS];
    char known[512] = "";
    for (int i = 0; i < SCH_NKINDS; i++) {
        size_t used = strlen(known);
        snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", kinds[i].name);
        names[i] = kinds[i].name;
    }
    const char *near = diag_closest(prim, names, SCH_NKINDS);
    if (near)
        diag_error(x->d, ploc, "schedule: unknown primitive '%s' (did you mean '%s'?)", prim, near);
    else
        diag_error(x->d, ploc, "schedule: unknown primitive '%s' (known: %s)", prim, known);
    x->ok = false;
    skip_line(x);
}

static bool parse_line(lexer *x, sch_list *out)
{
    blanks(x);
    if (!*x->s)
        return false;
    if (*x->s == '\n') {
        advance(x);
        return true;
    }
    char tb[8];
    const char *names[16];
    diag_loc locs[16];
    int n = 0;
    for (;;) {
        blanks(x);
        if (!(isalpha((unsigned char)*x->s) || *x->s == '_')) {
            syntax(x, "schedule: expected a primitive or a name, found %s", tok_text(x, tb, sizeof tb));
            return true;
        }
        if (n == 16) {
            syntax(x, "schedule: too many names before '=' (at most %s)", "16");
            return true;
        }
        locs[n] = x->loc;
        names[n++] = word(x);
        blanks(x);
        if (*x->s == ',') {
            advance(x);
            continue;
        }
        break;
    }
    const char **results = NULL;
    int nresults = 0;
    diag_loc ploc = locs[0];
    const char *prim = names[0];
    if (*x->s == '=') {
        advance(x);
        blanks(x);
        results = ir_alloc(x->m->arena, sizeof *results * (size_t)n);
        for (int i = 0; i < n; i++)
            results[i] = names[i];
        nresults = n;
        ploc = x->loc;
        if (!(isalpha((unsigned char)*x->s) || *x->s == '_')) {
            syntax(x, "schedule: expected a primitive after '=', found %s", tok_text(x, tb, sizeof tb));
            return true;
        }
        prim = word(x);
    } else if (n > 1) {
        x->loc = locs[1];
        syntax(x, "schedule: expected '=' after the names %s", "of the results");
        return true;
    }
    int k = -1;
    for (int i = 0; i < SCH_NKINDS; i++)
        if (strcmp(prim, kinds[i].name) == 0)
            k = i;
    if (k < 0) {
        unknown_primitive(x, prim, ploc);
        return true;
    }
    blanks(x);
    if (*x->s != '(') {
        syntax(x, "schedule: expected '(' after the primitive, found %s", tok_text(x, tb, sizeof tb));
        return true;
    }
    advance(x);
    sch_step st = {.kind = (sch_kind)k, .loc = ploc, .results = results, .nresults = nresults};
    st.args = ir_alloc(x->m->arena, sizeof *st.args * 32);
    st.ints = ir_alloc(x->m->arena, sizeof *st.ints * 32);
    if (!parse_args(x, &st))
        return true;
    blanks(x);
    if (*x->s && *x->s != '\n') {
        syntax(x, "schedule: unexpected %s after the primitive (one per line)", tok_text(x, tb, sizeof tb));
        return true;
    }
    int want = kinds[k].nargs;
    if ((want >= 0 && st.nargs != want) || (want < 0 && st.nargs < 1)) {
        char msg[200];
        snprintf(msg, sizeof msg, "%d", st.nargs);
        diag_error(x->d, ploc, "schedule: %s takes %d argument%s, not %s", prim,
                   want < 0 ? 1 : want, want == 1 ? "" : "s", msg);
        x->ok = false;
        return true;
    }
    if (nresults != kinds[k].nresults) {
        if (kinds[k].nresults == 0)
            diag_error(x->d, ploc, "schedule: %s gives no result to name", prim);
        else
            diag_error(x->d, ploc, "schedule: %s gives %d result%s: write '%s = %s(...)'", prim,
                       kinds[k].nresults, kinds[k].nresults == 1 ? "" : "s",
                       kinds[k].nresults == 1 ? "name" : "outer, inner", prim);
        x->ok = false;
        return true;
    }
    /* argument types: split's and partition's second is a number, pad's
     * a number (the dimension) or a name (the loop), everything else a name */
    for (int i = 0; i < st.nargs; i++) {
        bool number = (st.kind == SCH_SPLIT || st.kind == SCH_REGROUP || st.kind == SCH_PARTITION ||
                       st.kind == SCH_PAD) && i == 1;
        if (st.kind == SCH_PAD && i == 1 && st.args[i])
            continue;
        if (number != (st.args[i] == NULL)) {
            diag_error(x->d, ploc, "schedule: argument %d of %s must be a %s", i + 1, prim,
                       number ? (st.kind == SCH_PARTITION ? "number (the point)"
                                   : st.kind == SCH_PAD ? "number (the dimension) or a loop" : "number (the factor)")
                              : "name");
            x->ok = false;
            return true;
        }
    }
    IR_PUSH(x->m->arena, out->steps, out->n, out->cap, st);
    return true;
}

bool sch_parse(ir_module *m, const char *text, diag_loc start, sch_list *out, diag *d)
{
    lexer x = {m, d, text, start, true};
    if (x.loc.line == 0) {
        x.loc.line = 1;
        x.loc.col = 1;
    }
    while (parse_line(&x, out))
        ;
    return x.ok;
}

void sch_print(FILE *out, const sch_list *l, int indent)
{
    for (int i = 0; i < l->n; i++) {
        const sch_step *s = &l->steps[i];
        fprintf(out, "%*s", indent, "");
        for (int r = 0; r < s->nresults; r++)
            fprintf(out, "%s%s", r ? ", " : "", s->results[r]);
        if (s->nresults)
            fprintf(out, " = ");
        fprintf(out, "%s(", sch_kind_name(s->kind));
        for (int a = 0; a < s->nargs; a++) {
            if (s->args[a])
                fprintf(out, "%s%s", a ? ", " : "", s->args[a]);
            else
                fprintf(out, "%s%lld", a ? ", " : "", (long long)s->ints[a]);
        }
        fprintf(out, ")\n");
    }
}

/* Statements of s once codegen has copied the bodies of its unrolled loops
 * (those with constant bounds and at most CG_UNROLL_COPIES iterations; it
 * leaves longer ones to the C compiler), counted up to cap + 1. */
static int64_t unrolled_size(const ir_stmt *s, int64_t cap)
{
    if (!s)
        return 0;
    int64_t n = 1, copies = 1;
    if (s->kind == IR_S_FOR && s->for_kind == IR_FOR_UNROLLED && sch_extent(s) >= 0 &&
        sch_extent(s) <= CG_UNROLL_COPIES) {
        n = 0;
        copies = sch_extent(s);
    }
    int64_t inner = unrolled_size(s->init, cap) + unrolled_size(s->orelse, cap);
    for (int i = 0; i < s->nbody && inner <= cap; i++)
        inner += unrolled_size(s->body[i], cap);
    if (inner > cap || (copies > 0 && inner > (cap - n) / copies))
        return cap + 1;
    return n + copies * inner;
}

static bool apply_primitive(sch_ctx *c, const sch_step *s);

bool sch_apply_step(ir_module *m, ir_func *f, const sch_step *s, diag *d)
{
    sch_ctx c = {m, f, d, s->loc};
    if (!apply_primitive(&c, s))
        return false;
    if (unrolled_size(f->body, SCH_UNROLL_MAX) > SCH_UNROLL_MAX) {
        sch_error(&c, "the unrolled loops of @%s would make more than %d statements of C; "
                  "unroll fewer or shorter loops (or split one and unroll its inner part)",
                  f->name, SCH_UNROLL_MAX);
        return false;
    }
    return true;
}

static bool apply_primitive(sch_ctx *c0, const sch_step *s)
{
    sch_ctx c = *c0;
    switch (s->kind) {
    case SCH_SPLIT: return sch_split(&c, s->args[0], s->ints[1], s->results[0], s->results[1]);
    case SCH_REGROUP: return sch_regroup(&c, s->args[0], s->ints[1], s->results[0], s->results[1]);
    case SCH_FUSE: return sch_fuse(&c, s->args[0], s->args[1], s->results[0]);
    case SCH_MERGE: return sch_merge(&c, s->args[0], s->args[1], s->results[0]);
    case SCH_REORDER: return sch_reorder(&c, s->args, s->nargs);
    case SCH_VECTORIZE: return sch_set_kind(&c, s->args[0], IR_FOR_VECTORIZED);
    case SCH_UNROLL: return sch_set_kind(&c, s->args[0], IR_FOR_UNROLLED);
    case SCH_PARALLEL: return sch_set_kind(&c, s->args[0], IR_FOR_PARALLEL);
    case SCH_DECOMPOSE_REDUCTION: return sch_decompose_reduction(&c, s->args[0], s->args[1]);
    case SCH_CACHE_READ: return sch_cache_read(&c, s->args[0], s->args[1], s->results[0]);
    case SCH_CACHE_WRITE: return sch_cache_write(&c, s->args[0], s->args[1], s->results[0]);
    case SCH_PAD: {
        /* pad(B), pad(B, d), pad(B, l), pad(B, d, l) */
        bool dim = s->nargs >= 2 && !s->args[1];
        const char *at = s->nargs >= 2 ? s->args[s->nargs - 1] : NULL;
        if (s->nargs > 3 || !s->args[0] || (s->nargs == 3 && (!dim || !at))) {
            sch_error(&c, "pad takes a buffer, an optional dimension and an optional loop, not %d "
                      "arguments", s->nargs);
            return false;
        }
        if (dim && s->ints[1] < 0) {
            sch_error(&c, "pad: the dimension to store innermost must be at least 0, not %lld",
                      (long long)s->ints[1]);
            return false;
        }
        return sch_pad(&c, s->args[0], dim ? s->ints[1] : -1, at, s->results[0]);
    }
    case SCH_REVERSE_COMPUTE_INLINE: return sch_reverse_compute_inline(&c, s->args[0]);
    case SCH_COMPUTE_INLINE: return sch_compute_inline(&c, s->args[0]);
    case SCH_RFACTOR: return sch_rfactor(&c, s->args[0], s->args[1]);
    case SCH_COMPUTE_AT: return sch_compute_at(&c, s->args[0], s->args[1], false);
    case SCH_REVERSE_COMPUTE_AT: return sch_compute_at(&c, s->args[0], s->args[1], true);
    case SCH_PARTITION:
        if (s->nargs > 2) {
            sch_error(&c, "partition takes a loop and an optional point, not %d arguments", s->nargs);
            return false;
        }
        return sch_partition(&c, s->args[0], s->nargs == 2 ? s->ints[1] : 0, s->nargs == 1);
    default: return false;
    }
}

/* "file:line:col" -> a location (file NULL when malformed). */
static diag_loc parse_loc(ir_module *m, const char *text)
{
    diag_loc l = {0, 0, 0};
    if (!text)
        return l;
    const char *c2 = strrchr(text, ':');
    if (!c2 || c2 == text)
        return l;
    const char *c1 = c2 - 1;
    while (c1 > text && *c1 != ':')
        c1--;
    if (*c1 != ':')
        return l;
    l.file = ir_strndup(m->arena, text, (size_t)(c1 - text));
    l.line = atoi(c1 + 1);
    l.col = atoi(c2 + 1);
    return l;
}

static void drop_attr(ir_func *f, const char *key)
{
    for (int i = 0; i < f->nattrs; i++)
        if (strcmp(f->attrs[i].key, key) == 0) {
            for (int j = i + 1; j < f->nattrs; j++)
                f->attrs[j - 1] = f->attrs[j];
            f->nattrs--;
            return;
        }
}

/* --dump-ir=schedule-steps: the function after one step, headed by the
 * step's number, location and text. */
static void dump_step(FILE *out, ir_module *m, ir_func *f, const sch_step *s, int number)
{
    sch_update_blocks(m, f->body);
    sch_list one = {(sch_step *)s, 1, 1};
    fprintf(out, "# -- @%s after schedule step %d, %s:%d:%d: ", f->name, number,
            s->loc.file ? s->loc.file : "<schedule>", s->loc.line, s->loc.col);
    fflush(out);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem) {
        sch_print(mem, &one, 0);
        fclose(mem);
    }
    if (text && len && text[len - 1] == '\n')
        text[len - 1] = 0;
    fprintf(out, "%s --\n", text ? text : "?");
    free(text);
    ir_print_func(out, f);
    fflush(out);
}

bool pass_schedule(ir_module *m, diag *d)
{
    bool ok = true;
    /* Schedules name the loops of the simplified IR (unit loops gone, index
     * arithmetic folded) at every -O level: simplify first when there is a
     * schedule (the -O1 and higher pipelines have just done so). */
    bool any = false;
    for (int i = 0; i < m->nfuncs; i++)
        any |= ir_func_attr(m->funcs[i], "schedule") != NULL;
    if (any && !pass_simplify(m, d))
        return false;
    for (int i = 0; i < m->nfuncs; i++) {
        ir_func *f = m->funcs[i];
        const char *text = ir_func_attr(f, "schedule");
        if (!text)
            continue;
        diag_loc start = parse_loc(m, ir_func_attr(f, "schedule_loc"));
        sch_list l = {0};
        if (!sch_parse(m, text, start, &l, d)) {
            ok = false;
            continue;
        }
        FILE *dump = pass_step_dump();
        for (int k = 0; k < l.n; k++) {
            if (!sch_apply_step(m, f, &l.steps[k], d)) {
                ok = false;
                break;
            }
            if (dump)
                dump_step(dump, m, f, &l.steps[k], k + 1);
        }
        sch_update_blocks(m, f->body);
        drop_attr(f, "schedule");
        drop_attr(f, "schedule_loc");
        ir_func_set_attr(m, f, "scheduled", "user");
    }
    return ok;
}
