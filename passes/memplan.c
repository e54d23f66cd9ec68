/* passes/memplan.c — memplan: graph temporaries whose lifetimes are disjoint
 * share storage in one arena.
 *
 * A temp's lifetime is the range of graph calls that pass it, first to last
 * (ir_graph_live_ranges); calls run one after the other in graph order.  Two
 * temps may share bytes only when no call sees both, so a call never reads
 * and writes the same bytes through two buffers (no in-place reuse).
 * Inputs, params and outputs keep storage of their own: inputs and params
 * must keep their values from run to run, outputs are read after the run.
 *
 * A placed temp's bytes hold another temp's dead data until it is written,
 * so every element must be written before it is read.  The lowering
 * guarantees that (a layer's comprehension defines every element of its
 * output; reductions carry an init); the pass adds a syntactic check: a
 * temp is placed only when, in the first call that passes it, the first
 * access to the parameter in the callee's text is a store whose indices
 * and value do not load it.  That rejects kernels that accumulate into or
 * read a temp before defining it, which keep their own (zeroed) storage.
 * TEC_POISON_ARENA=1 (runtime/exec.c) tests the rest at run time.
 *
 * The offsets and the arena size go into the IR (`arena N` in the graph,
 * `arena(OFFSET)` on each placed temp); the verifier checks the plan and
 * the executor (runtime/exec.c) allocates the arena once per run. */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

/* ---------------------------------------------------------------- the planner */

typedef struct order_key {
    int index;
    const pass_mem_item *item;
} order_key;

/* Largest first; then earlier first use; then the item's index (stable). */
static int by_size(const void *pa, const void *pb)
{
    const order_key *a = pa, *b = pb;
    if (a->item->bytes != b->item->bytes)
        return a->item->bytes > b->item->bytes ? -1 : 1;
    if (a->item->first != b->item->first)
        return a->item->first < b->item->first ? -1 : 1;
    return a->index - b->index;
}

static bool live(const pass_mem_item *it) { return it->first >= 0 && it->first <= it->last; }

static bool align_up(int64_t v, int64_t align, int64_t *out)
{
    if (__builtin_add_overflow(v, align - 1, out))
        return false;
    *out &= ~(align - 1);
    return true;
}

int64_t pass_memplan_solve(pass_mem_item *items, int n, int64_t align)
{
    if (align < 1 || (align & (align - 1)))
        return -1;
    order_key *order = malloc(sizeof *order * (size_t)(n + 1));
    int *placed = malloc(sizeof *placed * (size_t)(n + 1));   /* live neighbours, by offset */
    if (!order || !placed) {
        free(order);
        free(placed);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        order[i] = (order_key){i, &items[i]};
        items[i].offset = 0;
    }
    qsort(order, (size_t)n, sizeof *order, by_size);
    int64_t arena = 0;
    bool ok = true;
    for (int k = 0; k < n && ok; k++) {
        pass_mem_item *it = &items[order[k].index];
        if (it->bytes < 0) {
            ok = false;
            break;
        }
        if (live(it) && it->bytes > 0) {
            /* The items placed before it (larger ones) that are live with it,
             * in order of offset (insertion sort: n is small). */
            int np = 0;
            for (int j = 0; j < k; j++) {
                const pass_mem_item *o = &items[order[j].index];
                if (!live(o) || o->bytes == 0 || o->first > it->last || it->first > o->last)
                    continue;
                int q = np++;
                while (q > 0 && items[placed[q - 1]].offset > o->offset) {
                    placed[q] = placed[q - 1];
                    q--;
                }
                placed[q] = order[j].index;
            }
            /* The lowest aligned offset below, between or above them. */
            int64_t at = 0;
            for (int j = 0; j < np && ok; j++) {
                const pass_mem_item *o = &items[placed[j]];
                int64_t end;
                if (o->offset >= at && o->offset - at >= it->bytes)
                    break;
                if (__builtin_add_overflow(o->offset, o->bytes, &end) ||
                    !align_up(end, align, &end))
                    ok = false;
                else if (end > at)
                    at = end;
            }
            it->offset = at;
        }
        int64_t end;
        if (!ok || __builtin_add_overflow(it->offset, it->bytes, &end) ||
            !align_up(end, align, &end))
            ok = false;
        else if (end > arena)
            arena = end;
    }
    free(order);
    free(placed);
    return ok ? arena : -1;
}

/* ---------------------------------------------------------------- write before read */

/* Whether the first call passing graph buffer b (call c) writes it before
 * anything reads it. */
static bool written_first(const ir_graph_call *c, const ir_buffer *b)
{
    bool any = false;
    for (int a = 0; a < c->nargs; a++) {
        if (c->args[a] != b)
            continue;
        if (!c->fn || a >= c->fn->nparams ||
            ir_stmt_first_access(c->fn->body, c->fn->params[a]) != IR_ACCESS_STORE)
            return false;
        any = true;
    }
    return any;
}

/* ---------------------------------------------------------------- the pass */

bool pass_memplan(ir_module *m, diag *d)
{
    ir_graph *g = &m->graph;
    int n = g->nbufs;
    int *first = malloc(sizeof(int) * (size_t)(n + 1));
    int *last = malloc(sizeof(int) * (size_t)(n + 1));
    int *which = malloc(sizeof(int) * (size_t)(n + 1));
    pass_mem_item *items = malloc(sizeof *items * (size_t)(n + 1));
    if (!first || !last || !which || !items) {
        free(first);
        free(last);
        free(which);
        free(items);
        diag_error(d, diag_noloc(), "out of memory");
        return false;
    }
    ir_graph_live_ranges(g, first, last);
    g->has_arena = false;
    g->arena_bytes = 0;
    int ni = 0;
    for (int i = 0; i < n; i++) {
        ir_buffer *b = g->bufs[i];
        b->in_arena = false;
        b->arena_offset = 0;
        if (b->role != IR_BUF_TEMP)
            continue;
        int64_t bytes = ir_buffer_bytes(b);
        if (bytes < 0 || (first[i] >= 0 && !written_first(&g->calls[first[i]], b)))
            continue;
        which[ni] = i;
        items[ni++] = (pass_mem_item){bytes, first[i], last[i], 0};
    }
    bool ok = true;
    if (ni > 0) {
        int64_t arena = pass_memplan_solve(items, ni, IR_ARENA_ALIGN);
        if (arena < 0) {
            diag_error(d, diag_noloc(), "memplan: the activation arena's size does not fit in "
                       "64 bits");
            ok = false;
        } else {
            g->has_arena = true;
            g->arena_bytes = arena;
            for (int k = 0; k < ni; k++) {
                g->bufs[which[k]]->in_arena = true;
                g->bufs[which[k]]->arena_offset = items[k].offset;
            }
        }
    }
    free(first);
    free(last);
    free(which);
    free(items);
    return ok;
}
