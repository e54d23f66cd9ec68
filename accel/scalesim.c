/* accel/scalesim.c — `--accel-mode=scalesim`: SCALE-Sim v2's own numbers
 * (commit 22f88b1, CALC bandwidth mode), layer by layer.
 *
 * SCALE-Sim builds three operand matrices (ifmap after im2col, filter,
 * ofmap), cuts them into folds of the array, turns every fold into per-cycle
 * demand lines (skewed for the streaming operands, flipped for the
 * stationary one) and pushes the lines through double-buffered scratchpads.
 * Its cycles, utilizations and SRAM counts follow from the fold structure in
 * closed form.  Its DRAM counts depend on the order of the demands: a read
 * buffer remembers the distinct addresses of its current "epoch" (half the
 * buffer's words, in sets of one hundredth of it) and forgets them all when
 * the epoch fills; the write buffer drains in chunks.  So this file replays
 * the demand lines in SCALE-Sim's order, but only their valid entries and
 * with one epoch stamp per address: linear in the SRAM accesses, with no
 * matrix ever built.  doc/accel.md ("SCALE-Sim mode") lists the rules and
 * every way tec's own model differs. */
#include "accel/accel.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- one layer's matrices */

/* The layer as SCALE-Sim sees it: the convolution of its topology row (a
 * GEMM row is an M x K ifmap, a 1 x K filter, one channel, N filters). */
typedef struct ss_layer {
    int64_t ih, iw, fh, fw, ch, nf, sh, sw;
    int64_t eh, ew;          /* ofmap rows and columns: ceil((H - R + S) / S) */
    int64_t px, win;         /* ofmap pixels per filter, window size fh*fw*ch */
    /* im2col in two halves, so an address is a sum: pixel i's window
     * corner (row, column, address) and window element j's offset */
    int64_t *pix_r, *pix_c, *pix_a;
    int64_t *win_r, *win_c, *win_a;
} ss_layer;

/* The ifmap address of im2col entry (pixel i, window element j), or -1 for
 * a window that runs past the ifmap (ceil output sizes make such windows);
 * SCALE-Sim's operand_matrix.calc_ifmap_elem_addr. */
static inline int64_t ifmap_addr(const ss_layer *L, int64_t i, int64_t j)
{
    if (L->pix_r[i] + L->win_r[j] >= L->ih || L->pix_c[i] + L->win_c[j] >= L->iw)
        return -1;
    return L->pix_a[i] + L->win_a[j];
}

static bool im2col_tables(ss_layer *L)
{
    L->pix_r = malloc((size_t)L->px * 3 * sizeof(int64_t));
    L->win_r = malloc((size_t)L->win * 3 * sizeof(int64_t));
    if (!L->pix_r || !L->win_r)
        return false;
    L->pix_c = L->pix_r + L->px, L->pix_a = L->pix_c + L->px;
    L->win_c = L->win_r + L->win, L->win_a = L->win_c + L->win;
    for (int64_t i = 0; i < L->px; i++) {
        L->pix_r[i] = i / L->ew * L->sh;
        L->pix_c[i] = i % L->ew * L->sw;
        L->pix_a[i] = (L->pix_r[i] * L->iw + L->pix_c[i]) * L->ch;
    }
    for (int64_t j = 0; j < L->win; j++) {
        int64_t k = j % (L->fw * L->ch);
        L->win_r[j] = j / (L->fw * L->ch);
        L->win_c[j] = k / L->ch;
        L->win_a[j] = (L->win_r[j] * L->iw + L->win_c[j]) * L->ch + k % L->ch;
    }
    return true;
}

static void im2col_free(ss_layer *L)
{
    free(L->pix_r);
    free(L->win_r);
}

/* The three matrices: ifmap px x win, filter win x nf, ofmap px x nf. */
typedef enum { MAT_IFMAP, MAT_FILTER, MAT_OFMAP } ss_mat;

static inline int64_t mat_addr(const ss_layer *L, ss_mat m, int64_t r, int64_t c)
{
    switch (m) {
    case MAT_IFMAP: return ifmap_addr(L, r, c);
    case MAT_FILTER: return c * L->win + r;
    default: return r * L->nf + c;
    }
}

/* ---------------------------------------------------------------- demand lines of one fold */

/* How one operand's demand lines of one fold are laid out.  The fold uses a
 * block of the operand matrix: `rows` x `cols` valid entries from (r0, c0),
 * padded with -1 to `prows` x `width`.  Entry (r, c) of the block is matrix
 * element (r0 + r, c0 + c), or (c0 + c, r0 + r) when `transposed`, and array
 * column c demands it at line
 *   pre + r + c                           streaming operands (skewed), or
 *   pre + (prows - 1 - r) (+ c if skew)   `flipped`: the stationary operand,
 *                                         and the OS ofmap, which is skewed. */
typedef struct ss_block {
    ss_mat mat;
    bool transposed;
    int64_t r0, c0, rows, cols;
    int64_t prows, width;    /* padded block */
    int64_t pre;             /* leading null lines */
    bool flipped, skew;
} ss_block;

/* Calls visit(ctx, line, addr) for every valid entry in SCALE-Sim's order:
 * line by line, and within a line by array column. */
typedef void (*ss_visit)(void *ctx, int64_t line, int64_t addr);

static inline int64_t block_addr(const ss_layer *L, const ss_block *b, int64_t r, int64_t c)
{
    return b->transposed ? mat_addr(L, b->mat, b->c0 + c, b->r0 + r)
                         : mat_addr(L, b->mat, b->r0 + r, b->c0 + c);
}

/* Inlined into each walk so that the visitor is a direct call. */
#define WALK_INLINE static inline __attribute__((always_inline))

WALK_INLINE void block_walk(const ss_layer *L, const ss_block *b, int64_t base, ss_visit visit,
                            void *ctx)
{
    if (!b->flipped) {
        /* line t holds (t - c, c) for every column c */
        int64_t last = b->rows - 1 + b->cols - 1;
        for (int64_t t = 0; t <= last; t++) {
            int64_t clo = t - (b->rows - 1) > 0 ? t - (b->rows - 1) : 0;
            int64_t chi = t < b->cols - 1 ? t : b->cols - 1;
            for (int64_t c = clo; c <= chi; c++) {
                int64_t a = block_addr(L, b, t - c, c);
                if (a >= 0)
                    visit(ctx, base + b->pre + t, a);
            }
        }
        return;
    }
    /* flipped: padded row p = prows - 1 - r; line pre + p (+ c when skewed) */
    if (!b->skew) {
        for (int64_t p = b->prows - b->rows; p < b->prows; p++) {
            int64_t r = b->prows - 1 - p;
            for (int64_t c = 0; c < b->cols; c++) {
                int64_t a = block_addr(L, b, r, c);
                if (a >= 0)
                    visit(ctx, base + b->pre + p, a);
            }
        }
        return;
    }
    int64_t p0 = b->prows - b->rows;       /* first padded row holding data */
    int64_t last = b->prows - 1 + b->cols - 1;
    for (int64_t t = p0; t <= last; t++) {
        int64_t clo = t - (b->prows - 1) > 0 ? t - (b->prows - 1) : 0;
        int64_t chi = t - p0 < b->cols - 1 ? t - p0 : b->cols - 1;
        for (int64_t c = clo; c <= chi; c++) {
            int64_t a = block_addr(L, b, b->prows - 1 - (t - c), c);
            if (a >= 0)
                visit(ctx, base + b->pre + t, a);
        }
    }
}

/* The fold structure of one dataflow (SCALE-Sim's systolic_compute_*.py):
 * spatial rows Sr, spatial columns Sc, temporal T, and the lines of a fold. */
typedef struct ss_folds {
    int64_t R, C, Sr, Sc, T;
    int64_t fr, fc;          /* row and column folds */
    int64_t lines;           /* demand lines per fold */
} ss_folds;

static void folds_init(const acc_config *c, const ss_layer *L, ss_folds *f)
{
    f->R = c->rows, f->C = c->cols;
    switch (c->dataflow) {
    case ACC_DF_OS: f->Sr = L->px, f->Sc = L->nf, f->T = L->win; break;
    case ACC_DF_WS: f->Sr = L->win, f->Sc = L->nf, f->T = L->px; break;
    default: f->Sr = L->win, f->Sc = L->px, f->T = L->nf; break;
    }
    f->fr = (f->Sr + f->R - 1) / f->R;
    f->fc = (f->Sc + f->C - 1) / f->C;
    f->lines = c->dataflow == ACC_DF_OS ? f->T + f->R + f->C - 2
                                        : f->T + 2 * f->R + f->C - 2;
}

/* The block operand `op` demands in fold (fr, fc).  Rows used along Sr are
 * ru, columns used along Sc are cu. */
static ss_block fold_block(acc_dataflow df, const ss_folds *f, acc_operand op, int64_t fr,
                           int64_t fc)
{
    int64_t rs = fr * f->R, cs = fc * f->C;
    int64_t ru = f->Sr - rs < f->R ? f->Sr - rs : f->R;
    int64_t cu = f->Sc - cs < f->C ? f->Sc - cs : f->C;
    ss_block b = {0};
    switch (df) {
    case ACC_DF_OS:
        if (op == ACC_IFMAP)        /* ifmap^T[:, rows]: T x R, skewed */
            b = (ss_block){MAT_IFMAP, true, 0, rs, f->T, ru, f->T, f->R, 0, false, true};
        else if (op == ACC_FILTER)  /* filter[:, cols]: T x C, skewed */
            b = (ss_block){MAT_FILTER, false, 0, cs, f->T, cu, f->T, f->C, 0, false, true};
        else                        /* ofmap block R x C, flipped, after T - 1 */
            b = (ss_block){MAT_OFMAP, false, rs, cs, ru, cu, f->R, f->C, f->T - 1, true, true};
        break;
    case ACC_DF_WS:
        if (op == ACC_IFMAP)        /* ifmap[:, rows]: T x R after R null lines */
            b = (ss_block){MAT_IFMAP, false, 0, rs, f->T, ru, f->T, f->R, f->R, false, true};
        else if (op == ACC_FILTER)  /* filter block R x C, flipped, not skewed */
            b = (ss_block){MAT_FILTER, false, rs, cs, ru, cu, f->R, f->C, 0, true, false};
        else                        /* ofmap[:, cols]: T x C after 2R - 1 */
            b = (ss_block){MAT_OFMAP, false, 0, cs, f->T, cu, f->T, f->C, 2 * f->R - 1,
                           false, true};
        break;
    default:
        if (op == ACC_IFMAP)        /* ifmap^T block R x C, flipped, not skewed */
            b = (ss_block){MAT_IFMAP, true, rs, cs, ru, cu, f->R, f->C, 0, true, false};
        else if (op == ACC_FILTER)  /* filter[rows, :]^T: T x R after R null lines */
            b = (ss_block){MAT_FILTER, true, 0, rs, f->T, ru, f->T, f->R, f->R, false, true};
        else                        /* ofmap[cols, :]^T: T x C after 2R - 1 */
            b = (ss_block){MAT_OFMAP, true, 0, cs, f->T, cu, f->T, f->C, 2 * f->R - 1,
                           false, true};
        break;
    }
    return b;
}

/* Calls visit for every valid demand of operand op over the whole layer. */
WALK_INLINE void operand_walk(const acc_config *c, const ss_layer *L, const ss_folds *f,
                              acc_operand op, ss_visit visit, void *ctx)
{
    int64_t fold = 0;
    for (int64_t fc = 0; fc < f->fc; fc++)
        for (int64_t fr = 0; fr < f->fr; fr++, fold++) {
            ss_block b = fold_block(c->dataflow, f, op, fr, fc);
            block_walk(L, &b, fold * f->lines, visit, ctx);
        }
}

/* ---------------------------------------------------------------- SRAM side */

typedef struct first_last {
    int64_t first, last;
} first_last;

static inline void visit_first_last(void *ctx, int64_t line, int64_t addr)
{
    (void)addr;
    first_last *fl = ctx;
    if (fl->first < 0)
        fl->first = line;
    fl->last = line;
}

/* ---------------------------------------------------------------- the read buffer */

/* SCALE-Sim's ReadBufferEstimateBw (the CALC mode's read buffer): distinct
 * addresses are gathered into sets of `per_set` (one hundredth of the
 * buffer's words); an address is a hit while it is in a set of the current
 * group of 50 (the active half) or in the set being filled.  When the 50th
 * set of a group completes, the group is "prefetched" (its addresses are the
 * DRAM reads) and forgotten.  The prefetch windows give the DRAM start and
 * stop cycles. */
typedef struct rdbuf {
    /* per address: 1 + the group it was last read in, modulo 255 (a byte
     * keeps the array in cache; every 255 groups it is cleared, so a stale
     * stamp never equals the current one) */
    uint8_t *stamp;
    int64_t nstamp;
    int64_t per_set;
    int64_t in_group;         /* distinct addresses in the current group */
    uint8_t group;            /* the current group modulo 255 */
    int64_t reads;            /* DRAM reads so far */
    bool seen_first, active_done;
    int64_t first_cycle;
    int64_t pf_start, pf_end; /* the last prefetch window */
    int64_t trace_first, trace_last;
    bool any_trace;
} rdbuf;

static void rdbuf_trace(rdbuf *b, int64_t start, int64_t end)
{
    /* response cycles are the request cycles + the port latency of 1 */
    if (!b->any_trace)
        b->trace_first = start + 1;
    b->trace_last = end + 1;
    b->any_trace = true;
}

static inline void visit_read(void *ctx, int64_t line, int64_t addr)
{
    rdbuf *b = ctx;
    if (!b->seen_first) {
        b->seen_first = true;
        b->first_cycle = line;
    }
    if (b->stamp[addr] == b->group + 1)
        return;
    b->stamp[addr] = b->group + 1;
    b->reads++;
    b->in_group++;
    if (b->in_group < 50 * b->per_set)
        return;
    /* the 50th set of the group is complete */
    if (!b->active_done) {
        b->pf_end = b->first_cycle - 2;
        b->pf_start = b->pf_end - (50 * b->per_set + 9) / 10 + 1;
        b->active_done = true;
    }
    rdbuf_trace(b, b->pf_start, b->pf_end);
    b->pf_start = b->pf_end + 1;
    b->pf_end = line;
    b->in_group = 0;
    if (++b->group == 255) {
        b->group = 0;
        memset(b->stamp, 0, (size_t)b->nstamp);
    }
}

/* complete_all_prefetches: the sets not yet prefetched go now. */
static void rdbuf_finish(rdbuf *b)
{
    if (!b->active_done) {
        int64_t sets = (b->in_group + b->per_set - 1) / b->per_set;
        int64_t end = -2;
        rdbuf_trace(b, end - (sets * b->per_set + 9) / 10 + 1, end);
    } else {
        rdbuf_trace(b, b->pf_start, b->pf_end);
    }
}

/* ---------------------------------------------------------------- the write buffer */

/* SCALE-Sim's write_buffer with the CALC mode's drain bandwidth of C words
 * per line: written words are packed into lines of C; once more than half
 * the buffer is held and no drain is running, the partial line is closed
 * (padded) and up to ceil(half / C) lines drain, one per cycle.  A drain
 * counts every slot of its lines but the padding of its last line, which is
 * SCALE-Sim's small overcount of ofmap DRAM writes. */
typedef struct wrbuf {
    int64_t total, drain_size, bw;
    int64_t free_space;
    int64_t in_line;              /* words in the open line */
    int64_t *fill;                /* words per closed line (grows) */
    int64_t nlines, cap;
    int64_t drained;              /* closed lines already drained */
    int64_t drain_end;            /* cycle the running drain ends */
    int64_t writes;
    int64_t first, last;          /* drain cycles */
    bool any;
    int64_t stall;                /* cycles a full buffer would stall */
    bool oom;
} wrbuf;

static void wr_close_line(wrbuf *w)
{
    if (w->nlines == w->cap) {
        int64_t cap = w->cap ? 2 * w->cap : 1024;
        int64_t *nf = realloc(w->fill, (size_t)cap * sizeof *nf);
        if (!nf) {
            w->oom = true;
            return;
        }
        w->fill = nf, w->cap = cap;
    }
    w->fill[w->nlines++] = w->in_line;
    w->in_line = 0;
}

/* empty_drain_buf: returns the cycle its last line is written. */
static int64_t wr_drain(wrbuf *w, int64_t start)
{
    int64_t n = (w->drain_size + w->bw - 1) / w->bw;
    if (n > w->nlines - w->drained)
        n = w->nlines - w->drained;
    int64_t words = n * w->bw;
    if (n > 0)
        words -= w->bw - w->fill[w->drained + n - 1];
    w->writes += words;
    w->free_space += words;
    w->drained += n;
    if (!w->any)
        w->first = start;
    w->any = true;
    w->last = start + n - 1;
    return start + n - 1;
}

static inline void visit_write(void *ctx, int64_t line, int64_t addr)
{
    (void)addr;
    wrbuf *w = ctx;
    if (w->oom)
        return;
    w->in_line++;
    w->free_space--;
    if (w->in_line == w->bw)
        wr_close_line(w);
    if (line < w->drain_end) {
        if (w->free_space <= 0)
            w->stall += w->drain_end - line;
    } else if (w->free_space < w->total - w->drain_size) {
        if (w->in_line)
            wr_close_line(w);
        w->drain_end = wr_drain(w, line);
    }
}

/* empty_all_buffers, from the last ofmap demand line on. */
static void wr_finish(wrbuf *w, int64_t cycle)
{
    if (w->in_line)
        wr_close_line(w);
    while (w->drained < w->nlines && !w->oom)
        cycle = wr_drain(w, cycle) + 1;
}

/* ---------------------------------------------------------------- one layer */

static bool ss_fail(char *err, size_t errlen, const char *name, const char *what)
{
    snprintf(err, errlen, "tec: error: accelerator model (scalesim mode): layer %s: %s",
             name ? name : "?", what);
    return false;
}

/* The SCALE-Sim layer of l (one group of it). */
static bool ss_layer_of(const acc_layer *l, ss_layer *L, char *err, size_t errlen)
{
    memset(L, 0, sizeof *L);
    if (l->has_conv) {
        const acc_conv *cv = &l->conv;
        int64_t g = l->batch;
        if (g < 1 || cv->channels % g || cv->num_filters % g)
            return ss_fail(err, errlen, l->name, "groups do not divide channels and filters");
        *L = (ss_layer){.ih = cv->ifmap_h, .iw = cv->ifmap_w, .fh = cv->filt_h,
                        .fw = cv->filt_w, .ch = cv->channels / g, .nf = cv->num_filters / g,
                        .sh = cv->stride_h, .sw = cv->stride_w};
    } else {
        *L = (ss_layer){.ih = l->M, .iw = l->K, .fh = 1, .fw = l->K, .ch = 1, .nf = l->N,
                        .sh = 1, .sw = 1};
    }
    L->eh = acc_conv_out_ceil(L->ih, L->fh, L->sh);
    L->ew = acc_conv_out_ceil(L->iw, L->fw, L->sw);
    /* addresses must fit the stamp arrays; SCALE-Sim itself uses int32 */
    int64_t ifmap_words, rs, filter_words, ofmap_words;
    if (__builtin_mul_overflow(L->ih, L->iw, &ifmap_words) ||
        __builtin_mul_overflow(ifmap_words, L->ch, &ifmap_words) ||
        __builtin_mul_overflow(L->fh, L->fw, &rs) ||
        __builtin_mul_overflow(rs, L->ch, &L->win) ||
        __builtin_mul_overflow(L->win, L->nf, &filter_words) ||
        __builtin_mul_overflow(L->eh, L->ew, &L->px) ||
        __builtin_mul_overflow(L->px, L->nf, &ofmap_words) || ifmap_words >= INT32_MAX ||
        filter_words >= INT32_MAX || ofmap_words >= INT32_MAX)
        return ss_fail(err, errlen, l->name, "operand matrices past 2^31 entries "
                       "(SCALE-Sim's own limit)");
    return true;
}

static bool model_layer(const acc_config *c, const acc_layer *l, const ss_layer *Lp,
                        acc_ss_report *r, char *err, size_t errlen);

bool acc_scalesim_layer(const acc_config *c, const acc_layer *l, acc_ss_report *r,
                        char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (l->kind != ACC_LAYER_GEMM)
        return ss_fail(err, errlen, l->name, "SCALE-Sim models GEMM layers only");
    if (c->depth != 1)
        return ss_fail(err, errlen, l->name, "SCALE-Sim has no ArrayDepth (set it to 1)");
    ss_layer L;
    if (!ss_layer_of(l, &L, err, errlen))
        return false;
    if (!im2col_tables(&L)) {
        im2col_free(&L);
        return ss_fail(err, errlen, l->name, "out of memory");
    }
    bool ok = model_layer(c, l, &L, r, err, errlen);
    im2col_free(&L);
    return ok;
}

/* acc_scalesim_layer once the im2col tables are built. */
static bool model_layer(const acc_config *c, const acc_layer *l, const ss_layer *Lp,
                        acc_ss_report *r, char *err, size_t errlen)
{
    const ss_layer L = *Lp;
    ss_folds f;
    folds_init(c, &L, &f);
    const int64_t R = f.R, C = f.C, nfolds = f.fr * f.fc;

    /* Cycles: the demand lines of all folds, minus SCALE-Sim's one (the
     * cycle of the last line, counted from 0). */
    r->total_cycles = nfolds * f.lines - 1;

    /* Per-fold mapping efficiency and compute utilization, averaged over
     * folds unweighted, as SCALE-Sim does. */
    double map_sum = 0, util_sum = 0;
    /* SCALE-Sim measures a fold's cycles on the unskewed matrix of its
     * stationary operand (rows + columns - 1): T + R + C - 2 for OS, where
     * that is the ofmap, and 2R + 2C + T - 3 for WS and IS, one more than
     * the fold's demand lines per column beyond the first. */
    int64_t fold_cycles = c->dataflow == ACC_DF_OS ? f.lines : 2 * R + 2 * C + f.T - 3;
    for (int64_t fc = 0; fc < f.fc; fc++)
        for (int64_t fr = 0; fr < f.fr; fr++) {
            int64_t ru = f.Sr - fr * R < R ? f.Sr - fr * R : R;
            int64_t cu = f.Sc - fc * C < C ? f.Sc - fc * C : C;
            map_sum += (double)(ru * cu) / (double)(R * C);
            util_sum += (double)(ru * cu * f.T) / (double)(R * C * fold_cycles);
        }
    r->mapping_eff = map_sum / (double)nfolds * 100.0;
    r->compute_util = util_sum / (double)nfolds * 100.0;
    double macs = (double)L.px * (double)L.nf * (double)L.win;
    r->overall_util = macs * 100.0 / ((double)r->total_cycles * (double)(R * C));

    /* SRAM requests, as SCALE-Sim counts them: every demanded entry of a
     * fold's block including the -1s of ceil windows; OS adds R + C per fold
     * to its ofmap writes (its double count). */
    int64_t full = f.Sr * f.Sc;
    switch (c->dataflow) {
    case ACC_DF_OS:
        r->sram_count[ACC_IFMAP] = f.fc * f.T * f.Sr;
        r->sram_count[ACC_FILTER] = f.fr * f.T * f.Sc;
        r->sram_count[ACC_OFMAP] = full + nfolds * (R + C);
        break;
    case ACC_DF_WS:
        r->sram_count[ACC_IFMAP] = f.fc * f.T * f.Sr;
        r->sram_count[ACC_FILTER] = full;
        r->sram_count[ACC_OFMAP] = f.fr * f.T * f.Sc;
        break;
    default:
        r->sram_count[ACC_IFMAP] = full;
        r->sram_count[ACC_FILTER] = f.fc * f.T * f.Sr;
        r->sram_count[ACC_OFMAP] = f.fr * f.T * f.Sc;
        break;
    }
    for (int op = 0; op < ACC_NOPERANDS; op++)
        r->sram_bw[op] = (double)r->sram_count[op] / (double)r->total_cycles;

    /* SRAM start and stop: the first and last line with a valid demand, read
     * responses one cycle later (the hit latency), writes at once.  Folds
     * occupy consecutive lines, so only the first and last folds with a
     * valid demand need a walk. */
    for (int op = 0; op < ACC_NOPERANDS; op++) {
        first_last fl = {-1, -1};
        for (int64_t k = 0; k < nfolds && fl.first < 0; k++) {
            ss_block b = fold_block(c->dataflow, &f, (acc_operand)op, k % f.fr, k / f.fr);
            block_walk(&L, &b, k * f.lines, visit_first_last, &fl);
        }
        int64_t first = fl.first;
        /* the last fold may hold only windows past the ifmap (ceil sizes) */
        fl.first = -1;
        for (int64_t k = nfolds - 1; k >= 0 && first >= 0 && fl.first < 0; k--) {
            ss_block b = fold_block(c->dataflow, &f, (acc_operand)op, k % f.fr, k / f.fr);
            block_walk(&L, &b, k * f.lines, visit_first_last, &fl);
        }
        int64_t lat = op == ACC_OFMAP ? 0 : 1;
        r->sram_start[op] = first + lat;
        r->sram_stop[op] = fl.last + lat;
    }

    /* DRAM reads through the two read buffers. */
    int64_t addr_space[2] = {L.ih * L.iw * L.ch, L.win * L.nf};
    for (int op = ACC_IFMAP; op <= ACC_FILTER; op++) {
        rdbuf b = {0};
        b.nstamp = addr_space[op];
        b.stamp = calloc((size_t)b.nstamp, sizeof *b.stamp);
        if (!b.stamp)
            return ss_fail(err, errlen, l->name, "out of memory");
        /* SCALE-Sim's word is one byte whatever WordBytes says */
        b.per_set = c->sram_bytes[op] / 100;
        if (b.per_set < 1)
            b.per_set = 1;
        operand_walk(c, &L, &f, (acc_operand)op, visit_read, &b);
        rdbuf_finish(&b);
        free(b.stamp);
        r->dram_count[op] = b.reads;
        r->dram_start[op] = b.trace_first;
        r->dram_stop[op] = b.trace_last;
    }

    /* DRAM writes through the write buffer, drained from the last line. */
    wrbuf w = {0};
    w.total = c->sram_bytes[ACC_OFMAP];
    w.drain_size = w.total - (w.total + 1) / 2;
    w.bw = C;
    w.free_space = w.total;
    operand_walk(c, &L, &f, ACC_OFMAP, visit_write, &w);
    wr_finish(&w, r->total_cycles);
    free(w.fill);
    if (w.oom)
        return ss_fail(err, errlen, l->name, "out of memory");
    if (w.stall)
        return ss_fail(err, errlen, l->name, "SCALE-Sim's ofmap buffer would stall here "
                       "(a buffer smaller than two ofmap lines); not reproduced");
    r->dram_count[ACC_OFMAP] = w.writes;
    r->dram_start[ACC_OFMAP] = w.first;
    r->dram_stop[ACC_OFMAP] = w.last;
    for (int op = 0; op < ACC_NOPERANDS; op++)
        r->dram_bw[op] = (double)r->dram_count[op] /
                         (double)(r->dram_stop[op] - r->dram_start[op] + 1);
    return true;
}

bool acc_same_scalesim_layer(const acc_layer *a, const acc_layer *b)
{
    if (a->kind != ACC_LAYER_GEMM || b->kind != ACC_LAYER_GEMM ||
        a->has_conv != b->has_conv || a->batch != b->batch)
        return false;
    if (a->has_conv)
        return memcmp(&a->conv, &b->conv, sizeof a->conv) == 0;
    return a->M == b->M && a->N == b->N && a->K == b->K;
}

/* ---------------------------------------------------------------- reports */

/* Python's repr of a float, which SCALE-Sim's reports print: the shortest
 * digits that read back to the same double, with ".0" for whole numbers. */
static void py_float(FILE *out, double x)
{
    char buf[80];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    /* Python switches to exponent form below 1e-4 and from 1e16 on */
    double ax = fabs(x);
    if (ax != 0 && (ax < 1e-4 || ax >= 1e16)) {
        fputs(buf, out);
        return;
    }
    if (strchr(buf, 'e')) {            /* %g chose an exponent: print plainly */
        int prec = 0;
        char tmp[64];
        do
            snprintf(tmp, sizeof tmp, "%.*f", prec++, x);
        while (strtod(tmp, NULL) != x && prec < 20);
        snprintf(buf, sizeof buf, "%s", tmp);
    }
    fputs(buf, out);
    if (!strchr(buf, '.'))
        fputs(".0", out);
}

static void py_int(FILE *out, int64_t x) { fprintf(out, "%lld", (long long)x); }

bool acc_scalesim_write_reports(const char *dir, const acc_ss_report *rs, const int64_t *rows,
                                int n, char *err, size_t errlen)
{
    static const char *const names[3] = {"COMPUTE_REPORT.csv", "BANDWIDTH_REPORT.csv",
                                         "DETAILED_ACCESS_REPORT.csv"};
    static const char *const heads[3] = {
        "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, "
        "Compute Util %,\n",
        "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, "
        "Avg IFMAP DRAM BW, Avg FILTER DRAM BW, Avg OFMAP DRAM BW,\n",
        "LayerID, SRAM IFMAP Start Cycle, SRAM IFMAP Stop Cycle, SRAM IFMAP Reads, "
        "SRAM Filter Start Cycle, SRAM Filter Stop Cycle, SRAM Filter Reads, "
        "SRAM OFMAP Start Cycle, SRAM OFMAP Stop Cycle, SRAM OFMAP Writes, "
        "DRAM IFMAP Start Cycle, DRAM IFMAP Stop Cycle, DRAM IFMAP Reads, "
        "DRAM Filter Start Cycle, DRAM Filter Stop Cycle, DRAM Filter Reads, "
        "DRAM OFMAP Start Cycle, DRAM OFMAP Stop Cycle, DRAM OFMAP Writes,\n"};
    for (int k = 0; k < 3; k++) {
        size_t len = strlen(dir) + strlen(names[k]) + 2;
        char *path = malloc(len);
        if (!path) {
            snprintf(err, errlen, "tec: error: out of memory");
            return false;
        }
        snprintf(path, len, "%s/%s", dir, names[k]);
        FILE *out = fopen(path, "w");
        if (!out) {
            snprintf(err, errlen, "%s: error: cannot write: %s", path, strerror(errno));
            free(path);
            return false;
        }
        fputs(heads[k], out);
        int64_t id = 0;
        for (int i = 0; i < n; i++)
            for (int64_t g = 0; g < rows[i]; g++, id++) {
                const acc_ss_report *r = &rs[i];
                py_int(out, id);
                fputs(", ", out);
                if (k == 0) {
                    py_int(out, r->total_cycles), fputs(", ", out);
                    py_int(out, r->stall_cycles), fputs(", ", out);
                    py_float(out, r->overall_util), fputs(", ", out);
                    py_float(out, r->mapping_eff), fputs(", ", out);
                    py_float(out, r->compute_util), fputs(",", out);
                } else if (k == 1) {
                    for (int op = 0; op < 3; op++)
                        py_float(out, r->sram_bw[op]), fputs(", ", out);
                    for (int op = 0; op < 3; op++)
                        py_float(out, r->dram_bw[op]), fputs(op < 2 ? ", " : ",", out);
                } else {
                    for (int op = 0; op < 3; op++) {
                        py_float(out, (double)r->sram_start[op]), fputs(", ", out);
                        py_float(out, (double)r->sram_stop[op]), fputs(", ", out);
                        py_int(out, r->sram_count[op]), fputs(", ", out);
                    }
                    for (int op = 0; op < 3; op++) {
                        py_float(out, (double)r->dram_start[op]), fputs(", ", out);
                        py_float(out, (double)r->dram_stop[op]), fputs(", ", out);
                        py_int(out, r->dram_count[op]), fputs(op < 2 ? ", " : ",", out);
                    }
                }
                fputc('\n', out);
            }
        bool bad = ferror(out);
        if (fclose(out) != 0 || bad) {
            snprintf(err, errlen, "%s: error: cannot write", path);
            free(path);
            return false;
        }
        free(path);
    }
    return true;
}
