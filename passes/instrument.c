/* passes/instrument.c — inserts the profiling calls (doc/profile.md).
 *
 * Every function becomes
 *
 *     evaluate tec_prof_enter(F)          F = its index in the module
 *     evaluate tec_prof_count(S, N)       one per site whose count is static
 *     ...original body, with tec_prof_count(S, n) before the statements
 *        where a dynamic site's count becomes known...
 *     evaluate tec_prof_exit(F)
 *
 * The analysis (analyze.c) decides where each count goes; this file only
 * removes old profiling calls (so the pass is idempotent) and inserts the
 * new ones.
 */
#include <gmp.h>
#include <stdlib.h>
#include <string.h>

#include "passes/analyze.h"

static bool is_prof_eval(const ir_stmt *s)
{
    if (!s || s->kind != IR_S_EVAL || !s->value || s->value->kind != IR_CALL)
        return false;
    ir_intrin f = s->value->fn;
    return f == IR_FN_PROF_ENTER || f == IR_FN_PROF_EXIT || f == IR_FN_PROF_COUNT;
}

/* Removes profiling calls below s; returns what replaces s (an empty SEQ
 * for a removed call, the only child of a one-statement SEQ). */
static ir_stmt *strip(ir_module *m, ir_stmt *s)
{
    if (!s)
        return NULL;
    if (is_prof_eval(s))
        return ir_seq_new(m);
    if (s->kind == IR_S_SEQ) {
        int n = 0;
        for (int i = 0; i < s->nbody; i++) {
            if (is_prof_eval(s->body[i]))
                continue;
            s->body[n++] = strip(m, s->body[i]);
        }
        s->nbody = n;
        return n == 1 ? s->body[0] : s;
    }
    for (int i = 0; i < s->nbody; i++)
        s->body[i] = strip(m, s->body[i]);
    s->init = strip(m, s->init);
    s->orelse = strip(m, s->orelse);
    return s;
}

/* ---------------------------------------------------------------- counter updates */

/* One update to insert before `anchor` (NULL: at function entry). */
typedef struct pending {
    const ir_stmt *anchor;
    ir_stmt *eval;
} pending;

typedef struct inserter {
    ir_module *m;
    pending *p;
    int n;
    int used;          /* how many were placed */
} inserter;

static ir_expr *as_i64(ir_module *m, const ir_expr *e)
{
    return ir_cast(m, ir_expr_copy(m, e), IR_I64);
}

/* The number a plan adds per execution of its anchor. */
static ir_expr *plan_count(ir_module *m, const pass_count_plan *p, diag *d, bool *ok)
{
    if (p->inner > (uint64_t)INT64_MAX) {
        diag_internal(d, "instrument", "a count of %llu does not fit a counter update",
                      (unsigned long long)p->inner);
        *ok = false;
        return ir_int(m, 0);
    }
    if (!p->trip)
        return ir_int(m, (int64_t)p->inner);
    const ir_expr *lo = p->trip->lo, *hi = p->trip->hi;
    if (lo->kind == IR_INT && hi->kind == IR_INT) {
        mpz_t t, u;
        mpz_inits(t, u, NULL);
        mpz_set_si(t, hi->ival);
        mpz_set_si(u, lo->ival);
        mpz_sub(t, t, u);
        if (mpz_sgn(t) < 0)
            mpz_set_ui(t, 0);
        mpz_set_ui(u, 0);
        mpz_import(u, 1, -1, sizeof p->inner, 0, 0, &p->inner);
        mpz_mul(t, t, u);
        bool fits = mpz_fits_slong_p(t) && sizeof(long) == 8;
        int64_t v = fits ? (int64_t)mpz_get_si(t) : 0;
        mpz_clears(t, u, NULL);
        if (!fits) {
            diag_internal(d, "instrument", "a loop count does not fit a counter update");
            *ok = false;
        }
        return ir_int(m, v);
    }
    ir_expr *n = ir_expr_is_int(lo, 0) ? as_i64(m, hi)
                                       : ir_binary(m, IR_SUB, as_i64(m, hi), as_i64(m, lo));
    n = ir_binary(m, IR_MAX, n, ir_int(m, 0));
    if (p->inner != 1)
        n = ir_binary(m, IR_MUL, n, ir_int(m, (int64_t)p->inner));
    return n;
}

static ir_stmt *count_call(ir_module *m, int64_t id, ir_expr *n)
{
    ir_expr *args[2] = {ir_int(m, id), n};
    return ir_eval(m, ir_call(m, IR_FN_PROF_COUNT, args, 2));
}

static int pending_before(const inserter *in, const ir_stmt *s)
{
    int k = 0;
    for (int i = 0; i < in->n; i++)
        k += in->p[i].anchor == s;
    return k;
}

static ir_stmt *place(inserter *in, ir_stmt *s);

/* s, preceded by the updates anchored at it. */
static ir_stmt *with_updates(inserter *in, ir_stmt *s)
{
    const ir_stmt *orig = s;
    s = place(in, s);
    if (!pending_before(in, orig))
        return s;
    ir_stmt *seq = ir_seq_new(in->m);
    for (int i = 0; i < in->n; i++)
        if (in->p[i].anchor == orig) {
            ir_seq_append(in->m, seq, in->p[i].eval);
            in->used++;
        }
    ir_seq_append(in->m, seq, s);
    return seq;
}

/* Inserts the updates anchored below s. */
static ir_stmt *place(inserter *in, ir_stmt *s)
{
    if (!s)
        return NULL;
    if (s->kind == IR_S_SEQ) {
        ir_stmt **old = s->body;
        int n = s->nbody;
        ir_stmt *seq = ir_seq_new(in->m);
        for (int i = 0; i < n; i++) {
            ir_stmt *c = with_updates(in, old[i]);
            if (c->kind == IR_S_SEQ && c != old[i]) {
                for (int j = 0; j < c->nbody; j++)
                    ir_seq_append(in->m, seq, c->body[j]);
            } else {
                ir_seq_append(in->m, seq, c);
            }
        }
        s->body = seq->body;
        s->nbody = seq->nbody;
        s->capbody = seq->capbody;
        return s;
    }
    for (int i = 0; i < s->nbody; i++)
        s->body[i] = with_updates(in, s->body[i]);
    if (s->init)
        s->init = with_updates(in, s->init);
    if (s->orelse)
        s->orelse = with_updates(in, s->orelse);
    return s;
}

static ir_stmt *prof_call(ir_module *m, ir_intrin fn, int64_t index)
{
    ir_expr *arg = ir_int(m, index);
    return ir_eval(m, ir_call(m, fn, &arg, 1));
}

static bool instrument_func(ir_module *m, const pass_stats *st, int fi, diag *d)
{
    const pass_funcinfo *info = &st->funcs[fi];
    ir_func *f = m->funcs[fi];
    inserter in = {.m = m};
    in.p = calloc((size_t)info->nsites + 1, sizeof *in.p);
    if (!in.p) {
        diag_error(d, diag_noloc(), "out of memory");
        return false;
    }
    bool ok = true;
    ir_stmt *entry = ir_seq_new(m);
    ir_seq_append(m, entry, prof_call(m, IR_FN_PROF_ENTER, fi));
    for (int i = 0; i < info->nsites; i++) {
        const pass_site *s = &st->sites[info->first_site + i];
        ir_stmt *ev = count_call(m, s->id, plan_count(m, &s->plan, d, &ok));
        if (s->plan.anchor)
            in.p[in.n++] = (pending){s->plan.anchor, ev};
        else
            ir_seq_append(m, entry, ev);
    }
    ir_stmt *body = with_updates(&in, f->body);
    if (ok && in.used != in.n) {
        diag_internal(d, "instrument", "in @%s: %d counter updates found no place", f->name,
                      in.n - in.used);
        ok = false;
    }
    if (body && body->kind == IR_S_SEQ) {
        for (int i = 0; i < body->nbody; i++)
            ir_seq_append(m, entry, body->body[i]);
    } else if (body) {
        ir_seq_append(m, entry, body);
    }
    ir_seq_append(m, entry, prof_call(m, IR_FN_PROF_EXIT, fi));
    f->body = entry;
    free(in.p);
    return ok;
}

bool pass_instrument_with(ir_module *m, const pass_analyze_options *o, diag *d)
{
    for (int i = 0; i < m->nfuncs; i++)
        m->funcs[i]->body = strip(m, m->funcs[i]->body);
    pass_stats *st = pass_analyze(m, o, d);
    if (!st)
        return false;
    bool ok = true;
    for (int i = 0; i < m->nfuncs && ok; i++)
        ok = instrument_func(m, st, i, d);
    pass_stats_free(st);
    return ok;
}

bool pass_instrument(ir_module *m, diag *d)
{
    return pass_instrument_with(m, NULL, d);
}

bool pass_instrument_dynamic(ir_module *m, diag *d)
{
    pass_analyze_options o = {.force_dynamic = true};
    return pass_instrument_with(m, &o, d);
}
