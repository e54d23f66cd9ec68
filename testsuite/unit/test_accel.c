/* testsuite/unit/test_accel.c — the systolic-array model against hand
 * computations, config and topology errors with their exact messages,
 * padding, the tiling search, reports and sweeps.
 *
 * Usage: test_accel [SRCDIR]   (fixtures: SRCDIR/testsuite/accel, accel/configs)
 * One line per group of checks; exit status 1 if any failed. */
#include "accel/accel.h"

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testsuite/unit/test.h"

static const char *srcdir = ".";
static char tmpdir[256];

static const char *path_in(const char *dir, const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static bool load_cfg(const char *path, acc_config *c, char *err, size_t errlen)
{
    return acc_config_load(path, false, NULL, c, err, errlen);
}

static const char *write_tmp(const char *name, const char *text)
{
    const char *p = path_in(tmpdir, name);
    FILE *f = fopen(p, "w");
    if (!f) {
        perror(p);
        exit(2);
    }
    fputs(text, f);
    fclose(f);
    return p;
}

/* A 4x4 array with 64 kB buffers, 1-byte words, 2 words/cycle, 100 MHz and
 * round energy numbers, so every expected value below is easy to derive. */
static acc_config small_config(acc_dataflow df)
{
    acc_config c;
    acc_config_default(&c);
    c.rows = 4;
    c.cols = 4;
    c.depth = 1;
    c.dataflow = df;
    c.bandwidth = 2;
    c.clock_mhz = 100;
    c.energy = (acc_energy){.mac_pj = 1, .reg_pj = 0.5, .sram_read_pj = 2,
                            .sram_write_pj = 3, .dram_read_pj_per_byte = 10,
                            .dram_write_pj_per_byte = 20, .vector_op_pj = 0.25,
                            .static_mw = 1};
    return c;
}

static acc_layer gemm_layer(const char *name, int64_t M, int64_t N, int64_t K, int64_t batch)
{
    acc_layer l;
    memset(&l, 0, sizeof l);
    l.name = (char *)name;
    l.kind = ACC_LAYER_GEMM;
    l.M = M, l.N = N, l.K = K, l.batch = batch;
    return l;
}

static acc_result model(const acc_config *c, const acc_options *o, const acc_layer *l)
{
    acc_result r;
    char err[512];
    if (!acc_model_layer(c, o, l, &r, err, sizeof err)) {
        group_fail++;
        printf("  %s: unexpected error: %s\n", group_name, err);
        memset(&r, 0, sizeof r);
    }
    return r;
}

static void check_ops(const char *what, const int64_t got[3], int64_t a, int64_t b, int64_t c)
{
    char buf[128];
    const int64_t want[3] = {a, b, c};
    for (int op = 0; op < 3; op++) {
        snprintf(buf, sizeof buf, "%s[%s]", what, acc_operand_name((acc_operand)op));
        check_i(buf, got[op], want[op]);
    }
}

/* ---------------------------------------------------------------- dataflows */

static void test_os(void)
{
    group_begin("os 4x4 array, GEMM 8x6x10 untiled: folds, cycles, SRAM, DRAM, stalls, energy");
    acc_config c = small_config(ACC_DF_OS);
    acc_options o = {0, ACC_SEARCH_NONE};
    acc_layer l = gemm_layer("g", 8, 6, 10, 1);
    acc_result r = model(&c, &o, &l);
    /* OS: Sr = M = 8, Sc = N = 6, T = K = 10; Fr = ceil(8/4) = 2, Fc = ceil(6/4) = 2 */
    check_i("folds", r.folds, 4);                      /* 2 * 2 */
    check_i("compute_cycles", r.compute_cycles, 80);   /* 4 * (2*4 + 4 + 10 - 2) = 4 * 20 */
    check_i("macs", r.macs, 480);                      /* 8 * 6 * 10 */
    check_i("mac_slots", r.mac_slots, 640);            /* 4 folds * T 10 * 16 PEs */
    check_d("mapping_efficiency", r.mapping_efficiency, 0.75);   /* 480 / 640 */
    /* SRAM reads by the array: ifmap Fc*M*K = 2*80, filter Fr*N*K = 2*60;
     * ofmap: the DRAM write-back reads each of the 48 outputs once. */
    check_ops("sram_reads", r.sram_reads, 160, 120, 48);
    /* SRAM writes: DRAM fills of ifmap (80) and filter (60); ofmap: the
     * array writes each output once (48). */
    check_ops("sram_writes", r.sram_writes, 80, 60, 48);
    /* Everything fits in 32 kB (half of 64 kB): each operand moves once. */
    check_ops("dram_reads", r.dram_reads, 80, 60, 0);
    check_ops("dram_writes", r.dram_writes, 0, 0, 48);
    check_b("all resident", r.resident[0] && r.resident[1] && r.resident[2]);
    /* Stalls at 2 words/cycle: the first tiles (80 + 60 words) load before
     * compute: 70 cycles; the last output tile (48) drains after: 24; the
     * other 0 words overlap compute. */
    check_i("stall_cycles", r.stall_cycles, 94);
    check_i("total_cycles", r.total_cycles, 174);
    check_d("compute_utilization", r.compute_utilization, 480.0 / (16 * 80));
    check_d("utilization", r.utilization, 480.0 / (16 * 174));
    check_d("latency_us", r.latency_us, 1.74);         /* 174 cycles / 100 MHz */
    /* energy: MAC 480*1; reg 2*480*0.5 = 480; SRAM (160+120+48)*2 +
     * (80+60+48)*3 = 656 + 564 = 1220; DRAM 140 B * 10 + 48 B * 20 = 2360;
     * static 1 mW * 1.74 us = 1.74 nJ = 1740 pJ; total 6280 */
    check_d("energy.mac", r.energy.mac, 480);
    check_d("energy.reg", r.energy.reg, 480);
    check_d("energy.sram", r.energy.sram, 1220);
    check_d("energy.dram", r.energy.dram, 2360);
    check_d("energy.stat", r.energy.stat, 1740);
    check_d("energy_pj", r.energy_pj, 6280);
    check_d("edp", r.edp, 6280 * 1.74);
    group_end();
}

/* test_os's GEMM with an int8 ifmap and filter and an int32 ofmap on
 * 2-byte words: the same element counts, in words of their bytes. */
static void test_element_sizes(void)
{
    group_begin("element sizes: int8 x int8 -> int32 on 2-byte words");
    acc_config c = small_config(ACC_DF_OS);
    c.word_bytes = 2;
    acc_options o = {0, ACC_SEARCH_NONE};
    acc_layer l = gemm_layer("g", 8, 6, 10, 1);
    l.elem_bytes[ACC_IFMAP] = 1;
    l.elem_bytes[ACC_FILTER] = 1;
    l.elem_bytes[ACC_OFMAP] = 4;
    acc_result r = model(&c, &o, &l);
    check_i("compute_cycles", r.compute_cycles, 80);   /* the array does not change */
    /* test_os's elements 160, 120, 48: ceil(160/2), ceil(120/2), 48*4/2 */
    check_ops("sram_reads", r.sram_reads, 80, 60, 96);
    check_ops("sram_writes", r.sram_writes, 40, 30, 96);
    check_ops("dram_reads", r.dram_reads, 40, 30, 0);
    check_ops("dram_writes", r.dram_writes, 0, 0, 96);
    /* 2 words/cycle: first tiles (40 + 30 words) 35 cycles, last output
     * tile (96 words) 48 cycles */
    check_i("stall_cycles", r.stall_cycles, 83);
    /* DRAM energy from the bytes: 140 B * 10 + 192 B * 20 */
    check_d("energy.dram", r.energy.dram, 140 * 10 + 192 * 20);
    /* Capacity is in bytes: 4-byte outputs fill a 64-byte half buffer with
     * 16 elements, where 1-byte ones would take 64. */
    c.sram_bytes[ACC_OFMAP] = 128;
    r = model(&c, &o, &l);
    check_b("48 int32 outputs do not fit 64 bytes", !r.resident[ACC_OFMAP]);
    l.elem_bytes[ACC_OFMAP] = 1;
    r = model(&c, &o, &l);
    check_b("48 int8 outputs fit", r.resident[ACC_OFMAP]);
    group_end();
}

static void test_ws(void)
{
    group_begin("ws 4x4 array, GEMM 8x6x10 untiled: folds, cycles, partial sums");
    acc_config c = small_config(ACC_DF_WS);
    acc_layer l = gemm_layer("g", 8, 6, 10, 1);
    acc_result r = model(&c, NULL, &l);
    /* WS: Sr = K = 10, Sc = N = 6, T = M = 8; Fr = ceil(10/4) = 3, Fc = 2 */
    check_i("folds", r.folds, 6);
    check_i("compute_cycles", r.compute_cycles, 108);  /* 6 * (8 + 4 + 8 - 2) = 6 * 18 */
    check_i("mac_slots", r.mac_slots, 768);            /* 6 * 8 * 16 */
    /* ifmap Fc*M*K = 160; filter K*N = 60 (each weight loaded once);
     * ofmap: (Fr-1)*M*N = 96 partial-sum reads + 48 write-back reads */
    check_ops("sram_reads", r.sram_reads, 160, 60, 144);
    /* ofmap: Fr*M*N = 144 writes of outputs and partial sums */
    check_ops("sram_writes", r.sram_writes, 80, 60, 144);
    check_ops("dram_reads", r.dram_reads, 80, 60, 0);
    check_ops("dram_writes", r.dram_writes, 0, 0, 48);
    check_i("stall_cycles", r.stall_cycles, 94);       /* 70 + 24 + 0, as for os */
    check_i("total_cycles", r.total_cycles, 202);
    group_end();
}

static void test_is(void)
{
    group_begin("is 4x4 array, GEMM 8x6x10 untiled: folds, cycles, SRAM");
    acc_config c = small_config(ACC_DF_IS);
    acc_layer l = gemm_layer("g", 8, 6, 10, 1);
    acc_result r = model(&c, NULL, &l);
    /* IS: Sr = K = 10, Sc = M = 8, T = N = 6; Fr = 3, Fc = 2 */
    check_i("folds", r.folds, 6);
    check_i("compute_cycles", r.compute_cycles, 96);   /* 6 * (8 + 4 + 6 - 2) = 6 * 16 */
    check_i("mac_slots", r.mac_slots, 576);            /* 6 * 6 * 16 */
    check_d("mapping_efficiency", r.mapping_efficiency, 480.0 / 576);
    /* ifmap M*K = 80 (each input loaded once); filter Fc*N*K = 120;
     * ofmap (Fr-1)*M*N = 96 + 48 write-back */
    check_ops("sram_reads", r.sram_reads, 80, 120, 144);
    check_ops("sram_writes", r.sram_writes, 80, 60, 144);
    check_i("total_cycles", r.total_cycles, 96 + 94);
    group_end();
}

static void test_conv_ifmap(void)
{
    group_begin("convolution ifmap: SRAM holds each pixel once, the array reads im2col rows");
    acc_config c = small_config(ACC_DF_OS);
    acc_conv cv = {6, 6, 3, 3, 2, 4, 1, 1};   /* 6x6x2 ifmap, 4 filters of 3x3 */
    acc_layer l;
    memset(&l, 0, sizeof l);
    l.name = "conv";
    char err[256];
    check_b(err, acc_conv_to_gemm(&cv, 1, &l, err, sizeof err));
    /* 4x4 outputs: M 16, N 4, K 3*3*2 = 18; im2col 288 words, 72 distinct */
    acc_result r = model(&c, NULL, &l);
    check_ops("dram_reads", r.dram_reads, 72, 72, 0);   /* filter 18*4 = 72 too */
    /* the array reads the im2col matrix: Fc*M*K = 1*16*18 */
    check_ops("sram_reads", r.sram_reads, 288, 4 * 72, 64);
    check_ops("sram_writes", r.sram_writes, 72, 72, 64);
    /* 1x1 stride 2 reads a quarter of a 5x5 ifmap: 3x3 outputs, K 2;
     * distinct pixels (50) exceed the 18 im2col words, which are all used */
    acc_conv s2 = {5, 5, 1, 1, 2, 3, 2, 2};
    check_b(err, acc_conv_to_gemm(&s2, 1, &l, err, sizeof err));
    r = model(&c, NULL, &l);
    check_i("strided 1x1 ifmap dram", r.dram_reads[ACC_IFMAP], 18);
    /* depthwise: 2 groups of 16 x 1 x 9, each with 36 distinct pixels */
    acc_conv dw = {6, 6, 3, 3, 2, 2, 1, 1};
    check_b(err, acc_conv_to_gemm(&dw, 2, &l, err, sizeof err));
    r = model(&c, NULL, &l);
    check_i("depthwise ifmap dram", r.dram_reads[ACC_IFMAP], 2 * 36);
    group_end();
}

static void test_tiling_orders(void)
{
    group_begin("os 4x4, GEMM 8x8x8 in 4x4x4 tiles: reuse by loop order");
    acc_config c = small_config(ACC_DF_OS);
    acc_layer l = gemm_layer("t", 8, 8, 8, 1);
    l.has_tiling = true;
    l.tiling = (acc_tiling){4, 4, 4, ACC_ORDER_MNK};
    acc_result r = model(&c, NULL, &l);
    /* 8 tiles of 4x4x4, one fold each of 2*4 + 4 + 4 - 2 = 14 cycles */
    check_i("tiles", r.tiles, 8);
    check_i("folds", r.folds, 8);
    check_i("compute_cycles", r.compute_cycles, 112);
    /* order m,n,k: ifmap (m,k) changes with k innermost, and n above it
     * does not index it: fetched 2 times (128); filter (k,n): m above: 128;
     * ofmap (m,n): k inside n, so each output tile stays until done: 64 */
    check_ops("dram_reads", r.dram_reads, 128, 128, 0);
    check_ops("dram_writes", r.dram_writes, 0, 0, 64);
    /* array: ifmap/filter 16 per tile (128); ofmap 16 writes per tile (128)
     * and 16 partial-sum reads per tile after the first k tile (64) */
    check_ops("sram_reads", r.sram_reads, 128, 128, 64 + 64);
    check_ops("sram_writes", r.sram_writes, 128, 128, 128);
    /* stalls (10): first tiles 16+16 words = 16 cycles, last output tile
     * 16 words = 8 cycles.  Between tiles, loads of the next tile and the
     * write-back of an output tile share the channel while a tile computes
     * (14 cycles).  m advances once and n twice: ifmap, filter (16 + 16)
     * and an output tile (48 / 3 = 16 words) change: 24 cycles, 10 stall;
     * k advances 4 times: ifmap and filter change (32 words), 16 cycles,
     * 2 stall.  16 + 8 + 3 * 10 + 4 * 2 = 62 */
    check_i("stall_cycles", r.stall_cycles, 62);

    l.tiling.order = ACC_ORDER_KMN;
    r = model(&c, NULL, &l);
    /* order k,m,n: ifmap's innermost loop m has only k above (which indexes
     * it): once (64); filter: innermost n, m above does not index it: 128;
     * ofmap: innermost n, k above: written twice (128), read back once (64) */
    check_ops("kmn dram_reads", r.dram_reads, 64, 128, 64);
    check_ops("kmn dram_writes", r.dram_writes, 0, 0, 128);
    check_ops("kmn sram_reads", r.sram_reads, 128, 128, 64 + 128);
    check_ops("kmn sram_writes", r.sram_writes, 64, 128, 128 + 64);
    check_i("kmn compute_cycles", r.compute_cycles, 112);   /* order does not change compute */
    group_end();
}

static void test_streaming(void)
{
    group_begin("os 4x4, 1 kB buffers, GEMM 32x8x32: ifmap streamed, filter and ofmap held");
    acc_config c = small_config(ACC_DF_OS);
    for (int op = 0; op < ACC_NOPERANDS; op++)
        c.sram_bytes[op] = 1024;
    c.bandwidth = 4;
    acc_layer l = gemm_layer("s", 32, 8, 32, 1);
    acc_result r = model(&c, NULL, &l);
    /* ifmap 32*32 = 1024 B > 512 B (half of 1 kB): streamed; filter 256 B
     * and ofmap 256 B fit */
    check_b("resident = s,r,r", !r.resident[0] && r.resident[1] && r.resident[2]);
    /* Fr = 8, Fc = 2, T = 32: 16 folds * (8 + 4 + 32 - 2) = 672 */
    check_i("compute_cycles", r.compute_cycles, 672);
    /* (7b) a streamed ifmap is swept Fc = 2 times through half its buffer
     * (512 words), which keeps 512 of its 1024 words: 1024 + 512 = 1536
     * (without that reuse, Fc*M*K = 2048); the filter once (256) although
     * the array reads it Fr*N*K = 2048 times */
    check_ops("dram_reads", r.dram_reads, 1536, 256, 0);
    check_ops("sram_reads", r.sram_reads, 2048, 2048, 256);
    /* stalls at 4 words/cycle: filter tile first (256: 64 cycles), output
     * last (256: 64 cycles); fold by fold, the first fold waits for its
     * ifmap rows (4 x 32 = 128 words: 32 cycles), and every later fold's
     * (128 words, then 64 in the second sweep) arrive while the fold before
     * computes (42 cycles) */
    check_i("stall_cycles", r.stall_cycles, 64 + 32 + 64);
    group_end();
}

/* Fold-level timing (10): a burst inside a layer stalls although the
 * layer's average bandwidth would do, and DramLatency delays each fold's
 * data. */
static bool count_fold(const acc_fold_event *e, void *ctx)
{
    acc_fold_event *sum = ctx;
    sum->fold++;
    sum->cycles += e->cycles;
    for (int op = 0; op < ACC_NOPERANDS; op++) {
        sum->sram[op] += e->sram[op];
        sum->dram_rd[op] += e->dram_rd[op];
    }
    sum->dram_wr += e->dram_wr;
    if (e->fold == 4)
        sum->start = e->start;
    return true;
}

static void test_fold_timing(void)
{
    group_begin("fold-level stalls: a column block's filter burst, DRAM latency, the trace's replay");
    /* os 4x4 at 2 words/cycle, GEMM 16x8x64: Fr = 4, Fc = 2, T = 64, folds
     * of 8 + 4 - 2 + 64 = 74 cycles, 592 in all.  The ifmap (1024 words)
     * and the ofmap (128) are held; the filter (512) is streamed through
     * 128 words: each column block of 64 x 4 = 256 words comes whole
     * before its first row fold, and 256 - 128 = 128 before each other. */
    acc_config c = small_config(ACC_DF_OS);
    c.sram_bytes[ACC_IFMAP] = 4096;
    c.sram_bytes[ACC_FILTER] = 256;
    c.sram_bytes[ACC_OFMAP] = 1024;
    acc_layer l = gemm_layer("burst", 16, 8, 64, 1);
    acc_result r = model(&c, NULL, &l);
    check_b("resident = r,s,r", r.resident[0] && !r.resident[1] && r.resident[2]);
    check_i("compute_cycles", r.compute_cycles, 592);
    check_ops("dram_reads", r.dram_reads, 1024, 2 * (256 + 3 * 128), 0);
    /* The 2432 words take 1216 cycles: the old layer average charged the
     * prologue (512) and epilogue (64) and 640 - 592 = 48 more.  Fold by
     * fold: prologue 512; the first fold waits for 256 filter words (128);
     * folds 1-3 get their 128 words (64 cycles) behind the fold before
     * (74); fold 4, the second column block's first, needs 256 words (128
     * cycles) behind fold 3's 74: 54; epilogue 64. */
    check_i("stall_cycles", r.stall_cycles, 512 + 128 + 54 + 64);
    /* A latency of 10 cycles: the prologue's data and every fold's arrive
     * 10 cycles later: the first fold waits 10 more, fold 4 10 more; folds
     * 1-3 (64 + 10 <= 74) and 5-7 still do not wait. */
    c.dram_latency = 10;
    r = model(&c, NULL, &l);
    check_i("stall_cycles with latency", r.stall_cycles, 512 + 10 + 128 + 10 + 54 + 10 + 64);
    /* The replay gives every fold, in order, and ends where the model does. */
    acc_fold_event sum;
    memset(&sum, 0, sizeof sum);
    int64_t last;
    char err[256];
    acc_result rt;
    check_b(err, acc_trace_layer(&c, NULL, &l, count_fold, &sum, &rt, &last, err, sizeof err));
    check_i("trace folds", sum.fold, 8);
    check_i("trace compute", sum.cycles, 592);
    check_i("trace end", last, r.total_cycles);
    check_i("trace fold 4 start", sum.start, 522 + 128 + 10 + 4 * 74 + 54 + 10);
    check_ops("trace sram", sum.sram, r.sram_reads[0], r.sram_reads[1], 128);
    check_ops("trace dram reads", sum.dram_rd, r.dram_reads[0], r.dram_reads[1], 0);
    /* the held ofmap leaves in the epilogue, after the last fold */
    check_i("trace dram writes", sum.dram_wr, r.dram_writes[ACC_OFMAP]);
    check_i("the ofmap's 128 words", r.dram_writes[ACC_OFMAP], 128);
    /* In CALC mode nothing stalls. */
    c.bw_unlimited = true;
    r = model(&c, NULL, &l);
    check_i("CALC stall_cycles", r.stall_cycles, 0);
    group_end();
}

static void test_streamed_reuse(void)
{
    group_begin("(7b) streamed operands: fold-order reuse, partial fits, spilled partial sums");
    char err[512];
    acc_result r;
    /* os 4x4, 256 B buffers (128 words each half), GEMM 16x64x64: the filter
     * (64x64 = 4096) and ifmap (16x64 = 1024) do not fit; the filter block
     * of one column fold is 64x4 = 256 words, swept by Fr = 4 row folds:
     * 256 + 3*(256 - 128) = 640 per block, 16 blocks = 10240 (the array
     * reads 4*4096 = 16384).  The ifmap is swept Fc = 16 times:
     * 1024 + 15*(1024 - 128) = 14464 (the array reads 16384). */
    acc_config c = small_config(ACC_DF_OS);
    for (int op = 0; op < ACC_NOPERANDS; op++)
        c.sram_bytes[op] = 256;
    acc_layer l = gemm_layer("f", 16, 64, 64, 1);
    r = model(&c, NULL, &l);
    check_b("resident = s,s,s", !r.resident[0] && !r.resident[1] && !r.resident[2]);
    check_ops("os dram_reads", r.dram_reads, 14464, 10240, 0);
    check_ops("os dram_writes", r.dram_writes, 0, 0, 16 * 64);
    /* ws, same buffers, GEMM 64x8x16: Fr = 4 row folds accumulate each
     * column block of outputs (64 pixels x 4 filters = 256 words) over
     * 4 folds; 128 fit, 128 spill after every fold but the last:
     * reads 3*128 per block, writes 256 + 3*128, 2 blocks. */
    c.dataflow = ACC_DF_WS;
    l = gemm_layer("p", 64, 8, 16, 1);
    r = model(&c, NULL, &l);
    check_b("ofmap streamed", !r.resident[2]);
    check_i("ws partial-sum reads", r.dram_reads[2], 2 * 3 * 128);
    check_i("ws ofmap writes", r.dram_writes[2], 2 * (256 + 3 * 128));
    /* os 4x4, 8 kB buffers (4096 words a half), a 3x3 convolution over a
     * 34x34x8 ifmap, 64 filters: M = 32*32, K = 72, distinct ifmap
     * 34*34*8 = 9248 > 4096, streamed.  A fold of 4 pixels spans 2 output
     * rows, so 4 input rows: a band of 4*34*8 = 1088 words fits, and a
     * sweep fetches each distinct word once; Fc = 16 sweeps keep 4096:
     * 9248 + 15*(9248 - 4096) = 86528 (the array reads 16*1024*72). */
    c.dataflow = ACC_DF_OS;
    for (int op = 0; op < ACC_NOPERANDS; op++)
        c.sram_bytes[op] = 8192;
    acc_conv cv = {34, 34, 3, 3, 8, 64, 1, 1};
    check_b("conv geometry", acc_conv_to_gemm(&cv, 1, &l, err, sizeof err));
    l.name = "conv";
    r = model(&c, NULL, &l);
    check_b("ifmap streamed", !r.resident[0]);
    check_i("sliding-window ifmap reads", r.dram_reads[0], 9248 + 15 * (9248 - 4096));
    /* 2 kB buffers (1024 words a half): 4 consecutive pixels of a 32-wide
     * output straddle two rows in 3 of 32 places, so they span
     * 1 + 3/32 output rows on average: a band of 3*272 + 3*272/32 = 841
     * words, which fits (a fold that straddles needs 4*272 = 1088, more
     * than the half buffer, but that is the exception).  Each sweep
     * fetches the distinct words once: 9248 + 15*(9248 - 1024). */
    for (int op = 0; op < ACC_NOPERANDS; op++)
        c.sram_bytes[op] = 2048;
    r = model(&c, NULL, &l);
    check_i("average band ifmap reads", r.dram_reads[0], 9248 + 15 * (9248 - 1024));
    /* 1 kB buffers (512 words a half): the band of 841 words does not fit.
     * The reuse between neighbouring taps of a filter row, R (S - 1) /
     * (RS - 1) = 6/8 of the 73728 - 9248 = 64480 words of window reuse
     * (48360), comes one tap apart: 4 pixels x 8 channels = 32 words,
     * which fit, so all of it is kept; of the other 16120, the fraction
     * (841 - 512) / 841 is missed: 6306.  A sweep fetches
     * 9248 + 6306 = 15554 words, and 16 sweeps keep 512 of them. */
    for (int op = 0; op < ACC_NOPERANDS; op++)
        c.sram_bytes[op] = 1024;
    r = model(&c, NULL, &l);
    check_i("band too large, taps kept", r.dram_reads[0], 15554 + 15 * (15554 - 512));
    group_end();
}

static void test_depth_and_batch(void)
{
    group_begin("ArrayDepth 4 (tensor-core-like) and batched GEMMs");
    acc_config c = small_config(ACC_DF_OS);
    c.depth = 4;
    c.bw_unlimited = true;
    acc_layer l = gemm_layer("d", 8, 8, 10, 1);
    acc_result r = model(&c, NULL, &l);
    /* OS: T = ceil(10 / 4) = 3; 2x2 folds of 2*4 + 4 + 3 - 2 = 13 */
    check_i("os compute_cycles", r.compute_cycles, 52);
    check_i("os mac_slots", r.mac_slots, 768);          /* 4 folds * 3 * 64 */
    check_i("os stall (CALC)", r.stall_cycles, 0);
    c.dataflow = ACC_DF_WS;
    r = model(&c, NULL, &l);
    /* WS: K = 10 fits the 4 rows x 4 deep = 16 slots: Fr = 1, Fc = 2,
     * T = M = 8: 2 * (8 + 4 + 8 - 2) */
    check_i("ws compute_cycles", r.compute_cycles, 36);
    l.batch = 3;
    r = model(&c, NULL, &l);
    check_i("ws batch 3 compute_cycles", r.compute_cycles, 108);
    check_i("ws batch 3 macs", r.macs, 3 * 8 * 8 * 10);
    check_ops("ws batch 3 dram_reads", r.dram_reads, 3 * 80, 3 * 80, 0);
    group_end();
}

static void test_vector(void)
{
    group_begin("vector layer: lanes, bandwidth stall, energy");
    acc_config c = small_config(ACC_DF_OS);
    c.vector_lanes = 64;
    c.bandwidth = 10;
    acc_layer l;
    memset(&l, 0, sizeof l);
    l.name = "relu";
    l.kind = ACC_LAYER_VECTOR;
    l.vector_ops = 1000;
    l.vector_read_bytes = 3000;
    l.vector_write_bytes = 1000;
    acc_result r = model(&c, NULL, &l);
    check_i("compute_cycles", r.compute_cycles, 16);   /* ceil(1000 / 64) */
    check_i("stall_cycles", r.stall_cycles, 384);      /* 4000 words / 10 = 400 - 16 */
    check_i("total_cycles", r.total_cycles, 400);
    check_ops("dram_reads", r.dram_reads, 3000, 0, 0);
    check_ops("dram_writes", r.dram_writes, 0, 0, 1000);
    /* 1000 * 0.25 + 3000 * 10 + 1000 * 20 + static 1 mW * 4 us = 4000 pJ */
    check_d("energy_pj", r.energy_pj, 250 + 30000 + 20000 + 4000);
    check_i("macs", r.macs, 0);
    group_end();
}

static void test_padding(void)
{
    group_begin("padding M, N, K to multiples of 4: extra MACs");
    acc_config c = small_config(ACC_DF_OS);
    acc_options o = {4, ACC_SEARCH_NONE};
    acc_layer l = gemm_layer("p", 10, 6, 5, 2);
    acc_result r = model(&c, &o, &l);
    check_i("M", r.M, 12);
    check_i("N", r.N, 8);
    check_i("K", r.K, 8);
    check_i("macs", r.macs, 600);                      /* 2 * 10*6*5 */
    check_i("pad_macs", r.pad_macs, 936);              /* 2 * (12*8*8 - 300) */
    check_d("energy.mac", r.energy.mac, 1536);         /* padded MACs are executed */
    o.pad_to = 1;
    r = model(&c, &o, &l);
    check_i("pad_to 1: pad_macs", r.pad_macs, 0);
    l.M = 8;
    o.pad_to = 4;
    r = model(&c, &o, &l);
    check_i("aligned M, padded N K: pad_macs", r.pad_macs, 2 * (8 * 8 * 8 - 8 * 6 * 5));
    group_end();
}

static void test_model_errors(void)
{
    group_begin("model errors: bad sizes, bad tiling, 64-bit overflow");
    acc_config c = small_config(ACC_DF_OS);
    char err[512];
    acc_result r;
    acc_layer l = gemm_layer("bad", 0, 4, 4, 1);
    check_b("M = 0 rejected", !acc_model_layer(&c, NULL, &l, &r, err, sizeof err));
    check_s("message", err, "tec: error: accelerator model: layer bad: bad GEMM 0x4x4 batch 1 "
            "(all must be positive)");
    l = gemm_layer("huge", INT64_C(1) << 31, INT64_C(1) << 31, INT64_C(1) << 31, 1);
    check_b("overflow rejected", !acc_model_layer(&c, NULL, &l, &r, err, sizeof err));
    check_s("message", err, "tec: error: accelerator model: layer huge: MAC count of "
            "2147483648x2147483648x2147483648 batch 1 does not fit in 64 bits");
    l = gemm_layer("t", 4, 4, 4, 1);
    acc_tiling t = {0, 4, 4, ACC_ORDER_MNK};
    check_b("tile 0 rejected", !acc_model_tiling(&c, NULL, &l, &t, &r, err, sizeof err));
    check_s("message", err, "tec: error: accelerator model: layer t: bad tiling 0x4x4 "
            "(tile sizes must be positive)");
    group_end();
}

/* ---------------------------------------------------------------- configs */

static void test_config_presets(void)
{
    group_begin("shipped presets and a plain SCALE-Sim config load");
    char err[512];
    acc_config c;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/accel/configs", srcdir);
    bool ok = load_cfg(path_in(dir, "edge_os_32x32.cfg"), &c, err, sizeof err);
    check_b(err, ok);
    check_i("edge rows", c.rows, 32);
    check_i("edge dataflow", c.dataflow, ACC_DF_OS);
    check_i("edge ifmap bytes", c.sram_bytes[ACC_IFMAP], 64 * 1024);
    check_d("edge static mW (no cited figure: 0)", c.energy.static_mw, 0);
    check_d("edge DRAM pJ/B (Horowitz's low end)", c.energy.dram_read_pj_per_byte, 160);
    check_b("edge SRAM energy derived from the size", c.energy.sram_read_pj < 0);
    check_d("edge 64 kB access", acc_sram_word_pj(&c, ACC_IFMAP, false), 1.25 * sqrt(8.0));
    ok = load_cfg(path_in(dir, "tpu_ws_128x128.cfg"), &c, err, sizeof err);
    check_b(err, ok);
    check_i("tpu cols", c.cols, 128);
    check_i("tpu dataflow", c.dataflow, ACC_DF_WS);
    check_i("tpu word bytes", c.word_bytes, 2);
    ok = load_cfg(path_in(dir, "is_16x16.cfg"), &c, err, sizeof err);
    check_b(err, ok);
    check_i("is dataflow", c.dataflow, ACC_DF_IS);
    ok = load_cfg(path_in(dir, "tensorcore_16x16x16.cfg"), &c, err, sizeof err);
    check_b(err, ok);
    check_i("tensor core depth", c.depth, 16);
    ok = load_cfg(path_in(srcdir, "testsuite/accel/scalesim_plain.cfg"), &c, err,
                         sizeof err);
    check_b(err, ok);
    check_d("plain bandwidth", c.bandwidth, 10);
    check_d("plain default clock", c.clock_mhz, 1000);
    check_s("plain run name", c.run_name, "scalesim_plain_32x32_os");
    /* configparser keys are case-insensitive; bandwidth per bank: minimum */
    const char *p = write_tmp("case.cfg",
                              "[architecture_presets]\narrayheight = 8\nARRAYWIDTH: 4\n"
                              "ifmapsramszkB = 2\nfiltersramszkB = 2\nofmapsramszkB = 2\n"
                              "Dataflow = WS\nBandwidth = 30, 20,40\n");
    ok = load_cfg(p, &c, err, sizeof err);
    check_b(err, ok);
    check_i("lower-case rows", c.rows, 8);
    check_i("upper-case cols", c.cols, 4);
    check_d("min bank bandwidth", c.bandwidth, 20);
    check_d("no DRAM latency by default", c.dram_latency, 0);
    p = write_tmp("latency.cfg",
                  "[architecture_presets]\nArrayHeight = 8\nArrayWidth = 8\n"
                  "IfmapSramSzkB = 8\nFilterSramSzkB = 8\nOfmapSramSzkB = 8\n"
                  "Dataflow = os\nBandwidth = 4\n[run_presets]\nInterfaceBandwidth = USER\n"
                  "[tec_architecture]\nDramLatency = 120\n");
    ok = load_cfg(p, &c, err, sizeof err);
    check_b(err, ok);
    check_d("DramLatency", c.dram_latency, 120);
    /* write and read back */
    FILE *f = fopen(path_in(tmpdir, "back.cfg"), "w");
    acc_config a;
    load_cfg(path_in(dir, "tensorcore_16x16x16.cfg"), &a, err, sizeof err);
    acc_config_write(f, &a);
    fclose(f);
    ok = load_cfg(path_in(tmpdir, "back.cfg"), &c, err, sizeof err);
    check_b(err, ok);
    check_b("written config reads back equal",
            ok && c.depth == a.depth && c.clock_mhz == a.clock_mhz &&
                c.energy.dram_read_pj_per_byte == a.energy.dram_read_pj_per_byte &&
                c.bandwidth == a.bandwidth && c.sram_bytes[2] == a.sram_bytes[2]);
    group_end();
}

/* Loads `text` twice: without strict it must load and warn exactly
 * `warnings`; with strict it must fail with `strict_err` (%s: the path). */
static void config_warning(const char *what, const char *text, const char *warnings,
                           const char *strict_err)
{
    const char *p = write_tmp("warn.cfg", text);
    char expect[2048], err[1024] = "";
    char *buf = NULL;
    size_t len = 0;
    FILE *w = open_memstream(&buf, &len);
    acc_config c;
    bool ok = acc_config_load(p, false, w, &c, err, sizeof err);
    fclose(w);
    check_b(what, ok);
    snprintf(expect, sizeof expect, warnings, p, p);
    check_s(what, buf, expect);
    free(buf);
    if (strict_err) {
        check_b(what, !acc_config_load(p, true, NULL, &c, err, sizeof err));
        snprintf(expect, sizeof expect, strict_err, p);
        check_s(what, err, expect);
    }
}

/* Loads `text` and checks that it fails with `want` (%s: the file's path). */
static void config_error(const char *what, const char *text, const char *want)
{
    const char *p = write_tmp("bad.cfg", text);
    char expect[1024], err[1024];
    snprintf(expect, sizeof expect, want, p);
    acc_config c;
    if (load_cfg(p, &c, err, sizeof err)) {
        group_fail++;
        printf("  %s: %s: loaded, expected an error\n", group_name, what);
        return;
    }
    check_s(what, err, expect);
}

#define ARCH_OK                                                                \
    "[general]\nrun_name = x\n[architecture_presets]\nArrayHeight = 8\n"       \
    "ArrayWidth = 8\nIfmapSramSzkB = 8\nFilterSramSzkB = 8\nOfmapSramSzkB = 8\n" \
    "Dataflow = os\nBandwidth = 4\n"

static void test_config_warnings(void)
{
    group_begin("config typos and missing keys warn (errors under strict)");
    config_warning("misspelled InterfaceBandwidth",
                   ARCH_OK "[run_presets]\nInterfaceBandwith: CALC\n",
                   "%s:12: warning: unknown key InterfaceBandwith in [run_presets] is ignored "
                   "(did you mean InterfaceBandwidth?)\n"
                   "%s: warning: missing key InterfaceBandwidth in [run_presets]: bandwidth "
                   "mode USER (stalls at Bandwidth words per cycle)\n",
                   "%s:12: error: unknown key InterfaceBandwith in [run_presets] is ignored "
                   "(did you mean InterfaceBandwidth?)");
    config_warning("missing [run_presets]", ARCH_OK,
                   "%s: warning: missing key InterfaceBandwidth in [run_presets]: bandwidth "
                   "mode USER (stalls at Bandwidth words per cycle)\n",
                   "%s: error: missing key InterfaceBandwidth in [run_presets]: bandwidth "
                   "mode USER (stalls at Bandwidth words per cycle)");
    config_warning("unknown section",
                   ARCH_OK "[run_presets]\nInterfaceBandwidth = USER\n[archtecture]\nX = 1\n",
                   "%s:14: warning: unknown section [archtecture] is ignored\n", NULL);
    config_warning("a key in the wrong section names the right one",
                   ARCH_OK "ClockMHz = 500\n[run_presets]\nInterfaceBandwidth = USER\n",
                   "%s:11: warning: unknown key ClockMHz in [architecture_presets] is ignored "
                   "(ClockMHz belongs in [tec_architecture])\n",
                   "%s:11: error: unknown key ClockMHz in [architecture_presets] is ignored "
                   "(ClockMHz belongs in [tec_architecture])");
    config_error("a tec key in the wrong tec section",
                 ARCH_OK "[run_presets]\nInterfaceBandwidth = USER\n[tec_energy]\n"
                 "clockmhz = 500\n",
                 "%s:14: error: unknown key clockmhz in [tec_energy] (ClockMHz belongs in "
                 "[tec_architecture])");
    config_warning("SCALE-Sim keys tec does not model are silent",
                   ARCH_OK "IfmapOffset: 0\nFilterOffset: 10000000\nOfmapOffset: 20000000\n"
                   "MemoryBanks: 1\n[run_presets]\nInterfaceBandwidth = USER\n"
                   "[sparsity]\nSparsitySupport = false\n[network_presets]\n"
                   "TopologyCsvLoc = \"x.csv\"\n", "", NULL);
    group_end();
}

static void test_config_errors(void)
{
    group_begin("config errors name the key, section and line");
    config_error("missing key",
                 "[architecture_presets]\nArrayWidth = 8\nIfmapSramSzkB = 8\n"
                 "FilterSramSzkB = 8\nOfmapSramSzkB = 8\nDataflow = os\nBandwidth = 4\n",
                 "%s: error: missing key ArrayHeight in [architecture_presets]");
    config_error("bad dataflow",
                 "[architecture_presets]\nArrayHeight = 8\nArrayWidth = 8\n"
                 "Dataflow = xs\n",
                 "%s:4: error: bad value 'xs' for Dataflow in [architecture_presets]: "
                 "expected os, ws or is");
    config_error("non-numeric value",
                 "[architecture_presets]\nArrayHeight = 8\nArrayWidth = eight\n",
                 "%s:3: error: bad value 'eight' for ArrayWidth in [architecture_presets]: "
                 "expected an integer from 1 to 65536");
    config_error("zero", "[architecture_presets]\nIfmapSramSzkB = 0\n",
                 "%s:2: error: bad value '0' for IfmapSramSzkB in [architecture_presets]: "
                 "expected an integer from 1 to 1073741824");
    config_error("negative energy", ARCH_OK "[tec_energy]\nMacPj = -1\n",
                 "%s:12: error: bad value '-1' for MacPj in [tec_energy]: expected a "
                 "non-negative number");
    config_error("zero clock", ARCH_OK "[tec_architecture]\nClockMHz = 0\n",
                 "%s:12: error: bad value '0' for ClockMHz in [tec_architecture]: expected "
                 "a positive number");
    config_error("unknown tec key", ARCH_OK "[tec_energy]\nMacPJJ = 1\n",
                 "%s:12: error: unknown key MacPJJ in [tec_energy] (did you mean MacPj?)");
    config_error("unknown tec section", ARCH_OK "[tec_power]\nStatic = 1\n",
                 "%s:12: error: unknown section [tec_power]");
    config_error("duplicate key", ARCH_OK "ArrayHeight = 16\n",
                 "%s:11: error: duplicate key ArrayHeight in [architecture_presets]");
    config_error("bad bandwidth mode", ARCH_OK "[run_presets]\nInterfaceBandwidth = FAST\n",
                 "%s:12: error: bad value 'FAST' for InterfaceBandwidth in [run_presets]: "
                 "expected USER or CALC");
    config_error("malformed line", "[architecture_presets]\nArrayHeight 8\n",
                 "%s:2: error: malformed line (expected 'key = value' or '[section]')");
    config_error("missing bandwidth",
                 "[architecture_presets]\nArrayHeight = 8\nArrayWidth = 8\nIfmapSramSzkB = 8\n"
                 "FilterSramSzkB = 8\nOfmapSramSzkB = 8\nDataflow = os\n",
                 "%s: error: missing key Bandwidth in [architecture_presets] (needed when "
                 "InterfaceBandwidth is USER)");
    config_error("bad bandwidth", ARCH_OK "[architecture_presets]\nBandwidth = 4,x\n",
                 "%s:12: error: duplicate key Bandwidth in [architecture_presets]");
    config_error("bad bandwidth list",
                 "[architecture_presets]\nBandwidth = 4,x\n",
                 "%s:2: error: bad value '4,x' for Bandwidth in [architecture_presets]: "
                 "expected a positive number of words per cycle (or a comma-separated list, "
                 "one per bank)");
    /* CALC needs no Bandwidth */
    const char *p = write_tmp("calc.cfg",
                              "[architecture_presets]\nArrayHeight = 8\nArrayWidth = 8\n"
                              "IfmapSramSzkB = 8\nFilterSramSzkB = 8\nOfmapSramSzkB = 8\n"
                              "Dataflow = os\n[run_presets]\nInterfaceBandwidth = CALC\n");
    acc_config c;
    char err[512];
    check_b("CALC without Bandwidth loads", load_cfg(p, &c, err, sizeof err));
    check_b("CALC is unlimited", c.bw_unlimited);
    char want[600];
    snprintf(want, sizeof want, "%s: error: cannot open: No such file or directory",
             path_in(tmpdir, "none.cfg"));
    check_b("missing file", !load_cfg(path_in(tmpdir, "none.cfg"), &c, err, sizeof err));
    check_s("missing file message", err, want);
    acc_config_default(&c);
    c.rows = 0;
    check_b("check rejects rows 0", !acc_config_check(&c, err, sizeof err));
    check_s("check message", err,
            "tec: error: accelerator config: ArrayHeight must be from 1 to 65536");
    group_end();
}

/* ---------------------------------------------------------------- topologies */

static void test_topology_read(void)
{
    group_begin("topology CSVs: conv and M,N,K formats, depthwise, two strides");
    acc_layer *ls;
    int n;
    char err[512];
    bool ok = acc_read_topology(path_in(srcdir, "testsuite/accel/small_conv.csv"),
                                ACC_TOPO_AUTO, &ls, &n, err, sizeof err);
    check_b(err, ok);
    if (!ok) {
        group_end();
        return;
    }
    check_i("layers", n, 5);
    /* conv_a: 6x6 ifmap, 3x3 filter, stride 1 -> 4x4 out: M 16, N 4, K 3*3*2 */
    check_i("conv_a M", ls[0].M, 16);
    check_i("conv_a N", ls[0].N, 4);
    check_i("conv_a K", ls[0].K, 18);
    /* conv_s2: 7x7, 3x3, stride 2 -> floor(4/2)+1 = 3: M 9, N 8, K 36 */
    check_i("conv_s2 M", ls[1].M, 9);
    check_i("conv_s2 K", ls[1].K, 36);
    /* dw_DP: depthwise over 8 channels -> 8 GEMMs of 16 x 1 x 9 */
    check_i("dw batch", ls[2].batch, 8);
    check_i("dw M", ls[2].M, 16);
    check_i("dw N", ls[2].N, 1);
    check_i("dw K", ls[2].K, 9);
    /* rect: 8x10, 3x5, strides 1 and 2 -> 6 x 3 out: M 18, K 30, N 3 */
    check_i("rect M", ls[3].M, 18);
    check_i("rect K", ls[3].K, 30);
    check_i("rect N", ls[3].N, 3);
    check_i("fc M N K", ls[4].M * 1000000 + ls[4].N * 1000 + ls[4].K, 1 * 1000000 + 10 * 1000 + 16);
    check_s("name", ls[3].name, "rect");

    /* round trips through both formats */
    const char *conv = path_in(tmpdir, "rt_conv.csv"), *gemm = path_in(tmpdir, "rt_gemm.csv");
    check_b(err, acc_write_topology(conv, ACC_TOPO_CONV, ls, n, err, sizeof err));
    check_b(err, acc_write_topology(gemm, ACC_TOPO_GEMM, ls, n, err, sizeof err));
    acc_layer *a, *b;
    int na, nb;
    check_b(err, acc_read_topology(conv, ACC_TOPO_AUTO, &a, &na, err, sizeof err));
    check_b(err, acc_read_topology(gemm, ACC_TOPO_AUTO, &b, &nb, err, sizeof err));
    check_i("conv round trip layers", na, 5);
    /* the depthwise layer becomes 8 rows of M,N,K */
    check_i("gemm round trip layers", nb, 4 + 8);
    int64_t macs_in = 0, macs_a = 0, macs_b = 0;
    for (int i = 0; i < n; i++)
        macs_in += ls[i].M * ls[i].N * ls[i].K * ls[i].batch;
    for (int i = 0; i < na; i++)
        macs_a += a[i].M * a[i].N * a[i].K * a[i].batch;
    for (int i = 0; i < nb; i++)
        macs_b += b[i].M * b[i].N * b[i].K * b[i].batch;
    check_i("conv round trip MACs", macs_a, macs_in);
    check_i("gemm round trip MACs", macs_b, macs_in);
    check_i("conv round trip dw batch", na == 5 ? a[2].batch : 0, 8);
    check_s("gemm group name", nb > 3 ? b[3].name : "", "dw_DP.g1");
    acc_layers_free(a, na);
    acc_layers_free(b, nb);
    acc_layers_free(ls, n);

    ok = acc_read_topology(path_in(srcdir, "testsuite/accel/small_gemm.csv"), ACC_TOPO_AUTO,
                           &ls, &n, err, sizeof err);
    check_b(err, ok);
    check_i("gemm layers", n, 3);
    if (ok) {
        check_i("g_big M", ls[2].M, 100);
        check_i("g_big N", ls[2].N, 70);
        check_i("g_big K", ls[2].K, 300);
        check_b("no conv geometry", !ls[2].has_conv);
        check_b("conv export refused",
                !acc_write_topology(conv, ACC_TOPO_CONV, ls, n, err, sizeof err));
        char want[600];
        snprintf(want, sizeof want, "%s: error: layer g4 has no convolution geometry; "
                 "write the M,N,K format instead", conv);
        check_s("conv export message", err, want);
        acc_layers_free(ls, n);
    }
    group_end();
}

static void test_resnets(void)
{
    group_begin("ResNet-18/50 topologies: layer counts and published MAC totals");
    struct { const char *file; int layers; int64_t macs; } nets[] = {
        /* torchvision: ResNet-18 1.81 GMACs, ResNet-50 4.09 GMACs
         * (convolutions and the classifier) */
        {"testsuite/accel/resnet18.csv", 21, INT64_C(1814073344)},
        {"testsuite/accel/resnet50.csv", 54, INT64_C(4089184256)},
    };
    for (int k = 0; k < 2; k++) {
        acc_layer *ls;
        int n;
        char err[512];
        if (!acc_read_topology(path_in(srcdir, nets[k].file), ACC_TOPO_AUTO, &ls, &n, err,
                               sizeof err)) {
            check_b(err, false);
            continue;
        }
        int64_t macs = 0;
        for (int i = 0; i < n; i++)
            macs += ls[i].M * ls[i].N * ls[i].K * ls[i].batch;
        check_i(nets[k].file, n, nets[k].layers);
        check_i(nets[k].file, macs, nets[k].macs);
        /* conv1: 112x112 outputs, 64 filters, 7*7*3 window */
        check_i("conv1 M", ls[0].M, 112 * 112);
        check_i("conv1 K", ls[0].K, 147);
        acc_config c = small_config(ACC_DF_WS);
        acc_result *rs = calloc((size_t)n, sizeof *rs), t;
        check_b(err, acc_model_network(&c, NULL, ls, n, rs, &t, NULL, err, sizeof err));
        check_i("network MACs", t.macs, nets[k].macs);
        free(rs);
        acc_layers_free(ls, n);
    }
    group_end();
}

static void topo_error(const char *what, const char *text, acc_topo_format fmt,
                       const char *want)
{
    const char *p = write_tmp("bad.csv", text);
    char expect[1024], err[1024];
    snprintf(expect, sizeof expect, want, p);
    acc_layer *ls;
    int n;
    if (acc_read_topology(p, fmt, &ls, &n, err, sizeof err)) {
        group_fail++;
        printf("  %s: %s: read, expected an error\n", group_name, what);
        acc_layers_free(ls, n);
        return;
    }
    check_s(what, err, expect);
}

#define CONV_HDR "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, " \
                 "Channels, Num Filter, Strides,\n"

static void test_topology_errors(void)
{
    group_begin("topology errors: file:line:col and the column's name");
    topo_error("bad number", CONV_HDR "c1, 8, x8, 3, 3, 1, 1, 1,\n", ACC_TOPO_AUTO,
               "%s:2:8: error: bad value 'x8' for IFMAP Width: expected a positive integer");
    topo_error("zero", CONV_HDR "c1, 8, 8, 3, 3, 0, 1, 1,\n", ACC_TOPO_AUTO,
               "%s:2:17: error: bad value '0' for Channels: expected a positive integer");
    topo_error("empty value", CONV_HDR "c1, 8, 8, , 3, 1, 1, 1,\n", ACC_TOPO_AUTO,
               "%s:2:11: error: bad value '' for Filter Height: expected a positive integer");
    topo_error("too few", CONV_HDR "\nc1, 8, 8, 3,\n", ACC_TOPO_AUTO,
               "%s:3: error: expected 8 or 9 values in the convolution format (Layer name, "
               "IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
               "Strides[, Stride Width]), got 4");
    topo_error("filter too big", CONV_HDR "c1, 2, 8, 3, 3, 1, 1, 1,\n", ACC_TOPO_AUTO,
               "%s:2:11: error: Filter Height 3 is larger than IFMAP Height 2");
    topo_error("gemm count", "Layer name, M, N, K,\nl0, 4, 4,\n", ACC_TOPO_AUTO,
               "%s:2: error: expected 4 values in the M,N,K format (Layer name, M, N, K), "
               "got 3");
    topo_error("gemm value", "Layer name, M, N, K\nl0, 4, -4, 4\n", ACC_TOPO_AUTO,
               "%s:2:8: error: bad value '-4' for N: expected a positive integer");
    topo_error("forced gemm", CONV_HDR "c1, 8, 8, 3, 3, 1, 1, 1,\n", ACC_TOPO_GEMM,
               "%s:2: error: expected 4 values in the M,N,K format (Layer name, M, N, K), "
               "got 8");
    topo_error("empty name", "Layer name, M, N, K,\n , 4, 4, 4,\n", ACC_TOPO_AUTO,
               "%s:2:2: error: empty layer name");
    topo_error("empty file", "\n\n", ACC_TOPO_AUTO,
               "%s: error: empty topology file (no header line)");
    topo_error("header only", CONV_HDR, ACC_TOPO_AUTO,
               "%s: error: no layers after the header line");
    topo_error("overflow", "Layer name, M, N, K,\nl0, 99999999999999999999, 4, 4,\n",
               ACC_TOPO_AUTO,
               "%s:2:5: error: bad value '99999999999999999999' for M: expected a positive "
               "integer");
    group_end();
}

/* ---------------------------------------------------------------- search */

static bool fits(const acc_config *c, acc_operand op, int64_t words)
{
    return words * c->word_bytes <= c->sram_bytes[op] / 2;
}

/* The ifmap words an m x k im2col tile of a convolution occupies in SRAM:
 * its share of the distinct pixels (doc/accel.md, equation (7)). */
static int64_t ifmap_tile(const acc_layer *l, int64_t tm, int64_t tk)
{
    int64_t mk = l->M * l->K, uniq = mk;
    if (l->has_conv) {
        int64_t px = l->conv.ifmap_h * l->conv.ifmap_w * (l->conv.channels / l->batch);
        uniq = px < mk ? px : mk;
    }
    return (int64_t)(((__int128)tm * tk * uniq + mk - 1) / mk);
}

static void test_search(void)
{
    group_begin("tiling search: resident tiles fit half their SRAM, never worse than untiled");
    acc_layer *ls;
    int n;
    char err[512];
    if (!acc_read_topology(path_in(srcdir, "testsuite/accel/resnet18.csv"), ACC_TOPO_AUTO,
                           &ls, &n, err, sizeof err)) {
        check_b(err, false);
        group_end();
        return;
    }
    int64_t sizes_kb[] = {4, 64, 1024};
    int checked = 0, improved = 0;
    for (int df = 0; df < ACC_NDATAFLOWS; df++)
        for (int s = 0; s < 3; s++) {
            acc_config c;
            acc_config_default(&c);
            c.rows = c.cols = 16;
            c.dataflow = (acc_dataflow)df;
            for (int op = 0; op < ACC_NOPERANDS; op++)
                c.sram_bytes[op] = sizes_kb[s] * 1024;
            for (int i = 0; i < n; i++) {
                acc_options none = {0, ACC_SEARCH_NONE}, dram = {0, ACC_SEARCH_DRAM},
                            edp = {0, ACC_SEARCH_EDP};
                acc_result r0 = model(&c, &none, &ls[i]);
                acc_result rd = model(&c, &dram, &ls[i]);
                acc_result re = model(&c, &edp, &ls[i]);
                const acc_result *rr[2] = {&rd, &re};
                for (int k = 0; k < 2; k++) {
                    const acc_result *r = rr[k];
                    const acc_tiling *t = &r->tiling;
                    const int64_t tile[3] = {ifmap_tile(&ls[i], t->tm, t->tk), t->tk * t->tn,
                                             t->tm * t->tn};
                    bool is_default = t->tm == r0.M && t->tn == r0.N && t->tk == r0.K;
                    for (int op = 0; op < ACC_NOPERANDS; op++) {
                        /* a resident tile must fit; a searched (non-default)
                         * tiling holds all three */
                        if (r->resident[op] && !fits(&c, (acc_operand)op, tile[op]))
                            check_b("resident tile fits", false);
                        if (!is_default && !r->resident[op])
                            check_b("searched tiling is fully resident", false);
                    }
                    if (t->tm > r0.M || t->tn > r0.N || t->tk > r0.K)
                        check_b("tiles within the dimensions", false);
                    improved += !is_default;
                }
                /* never below the compulsory traffic: every distinct input
                 * word read, every output written, once */
                int64_t cin = ifmap_tile(&ls[i], r0.M, r0.K) * r0.batch;
                if (r0.dram_reads[0] < cin || r0.dram_reads[1] < r0.K * r0.N * r0.batch ||
                    r0.dram_writes[2] < r0.M * r0.N * r0.batch)
                    check_b("untiled DRAM traffic >= compulsory", false);
                int64_t d0 = acc_result_dram_reads(&r0) + acc_result_dram_writes(&r0);
                int64_t dd = acc_result_dram_reads(&rd) + acc_result_dram_writes(&rd);
                if (dd > d0)
                    check_i("DRAM search traffic <= untiled", dd, d0);
                if (re.edp > r0.edp)
                    check_d("EDP search <= untiled", re.edp, r0.edp);
                if (rd.macs != r0.macs || re.macs != r0.macs)
                    check_b("MACs unchanged by tiling", false);
                checked++;
            }
        }
    check_i("layer searches checked", checked, 3 * 3 * n);
    /* with 4 kB buffers nothing of ResNet-18 fits untiled: the search must
     * actually find tilings, or this test would prove nothing */
    check_b("search found tilings", improved > n);
    /* a given tiling is used as given */
    acc_config c = small_config(ACC_DF_OS);
    acc_layer l = gemm_layer("given", 64, 64, 64, 1);
    l.has_tiling = true;
    l.tiling = (acc_tiling){16, 32, 8, ACC_ORDER_NKM};
    acc_options o = {0, ACC_SEARCH_EDP};
    acc_result r = model(&c, &o, &l);
    check_i("given tm", r.tiling.tm, 16);
    check_i("given tn", r.tiling.tn, 32);
    check_i("given tk", r.tiling.tk, 8);
    check_i("given order", r.tiling.order, ACC_ORDER_NKM);
    acc_layers_free(ls, n);
    group_end();
}

/* ---------------------------------------------------------------- network, reports, sweeps */

static void test_network_reports(void)
{
    group_begin("network totals, CSV and JSON reports, sweep grid");
    acc_config c = small_config(ACC_DF_OS);
    acc_layer ls[3] = {gemm_layer("a", 8, 6, 10, 1), gemm_layer("b", 8, 6, 10, 1),
                       gemm_layer("c", 4, 4, 4, 1)};
    acc_result rs[3], t;
    char err[512];
    int64_t evals = 0;
    check_b(err, acc_model_network(&c, NULL, ls, 3, rs, &t, &evals, err, sizeof err));
    check_i("identical layers modeled once", evals, 2);
    check_s("copied result keeps its name", rs[1].name, "b");
    check_i("total cycles", t.total_cycles,
            rs[0].total_cycles + rs[1].total_cycles + rs[2].total_cycles);
    check_i("total dram ifmap reads", t.dram_reads[ACC_IFMAP], 80 + 80 + 16);
    check_d("total energy", t.energy_pj, rs[0].energy_pj * 2 + rs[2].energy_pj);
    check_d("total edp", t.edp, t.energy_pj * t.latency_us);
    check_d("total utilization", t.utilization, (480.0 * 2 + 64) / (16.0 * t.total_cycles));

    FILE *f = fopen(path_in(tmpdir, "r.csv"), "w+");
    acc_write_csv(f, rs, 3, &t);
    rewind(f);
    char line[4096];
    int lines = 0, commas0 = -1;
    bool same_cols = true;
    while (fgets(line, sizeof line, f)) {
        int commas = 0;
        for (char *p = line; *p; p++)
            commas += *p == ',';
        if (commas0 < 0)
            commas0 = commas;
        same_cols &= commas == commas0;
        lines++;
    }
    fclose(f);
    check_i("csv lines (header, 3 layers, total)", lines, 5);
    check_b("csv rows all have the header's columns", same_cols);
    f = fopen(path_in(tmpdir, "r.json"), "w+");
    acc_write_json(f, &c, NULL, rs, 3, &t);
    rewind(f);
    static char json[1 << 16];
    size_t len = fread(json, 1, sizeof json - 1, f);
    json[len] = '\0';
    fclose(f);
    check_b("json has layers and total",
            strstr(json, "\"layers\": [") && strstr(json, "\"total\": {"));
    check_b("json total kind", strstr(json, "\"kind\": \"total\"") != NULL);
    check_b("json layer c", strstr(json, "\"name\": \"c\"") != NULL);

    acc_sweep_spec s;
    check_b(err, acc_sweep_spec_parse(NULL, NULL, NULL, &s, err, sizeof err));
    check_i("default sweep size", acc_sweep_count(&s), 105);
    check_b(err, acc_sweep_spec_parse("4x4,8x16", "os,is", "1,2,64", &s, err, sizeof err));
    check_i("sweep size", acc_sweep_count(&s), 12);
    f = fopen(path_in(tmpdir, "sweep.csv"), "w+");
    check_b(err, acc_sweep(&c, NULL, &s, ls, 3, f, &evals, err, sizeof err));
    rewind(f);
    lines = 0;
    while (fgets(line, sizeof line, f))
        lines++;
    fclose(f);
    check_i("sweep csv lines", lines, 13);
    check_i("sweep evaluations (2 distinct layers x 12)", evals, 24);
    check_b("bad shape rejected", !acc_sweep_spec_parse("4y4", NULL, NULL, &s, err, sizeof err));
    check_s("bad shape message", err, "tec: error: bad array shape list '4y4': expected "
            "ROWSxCOLS[,ROWSxCOLS...] with sizes from 1 to 65536");
    check_b("bad dataflow rejected", !acc_sweep_spec_parse(NULL, "os,xs", NULL, &s, err, sizeof err));
    check_s("bad dataflow message", err, "tec: error: bad dataflow list 'os,xs': expected up "
            "to three of os, ws, is separated by commas");
    group_end();
}

/* The scratch directory holds only files this test wrote. */
static void remove_tmpdir(void)
{
    DIR *d = opendir(tmpdir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlink(path_in(tmpdir, e->d_name));
    closedir(d);
    rmdir(tmpdir);
}

/* SRAM energy and area from the buffer's size (accel/energy.c): the fit
 * passes Horowitz's 45 nm points (10 / 20 / 100 pJ per 64-bit read from 8 kB
 * / 32 kB / 1 MB) within 15%, a larger buffer costs more per access, a
 * value in the config wins, and the node scales energy linearly and area
 * quadratically.  A sweep over SRAM sizes then no longer gets cheaper
 * SRAM accesses from a larger buffer, and an area budget leaves configs
 * out. */
static void test_energy_model(void)
{
    group_begin("SRAM energy and area from size, node and word");
    static const struct { int64_t bytes; double pj64; } horowitz[] = {
        {8 << 10, 10}, {32 << 10, 20}, {1 << 20, 100}};
    for (int i = 0; i < 3; i++) {
        double fit = acc_sram_fit_pj(horowitz[i].bytes, 8, 45);
        check_b("fit within 15% of Horowitz's point",
                fabs(fit - horowitz[i].pj64) <= 0.15 * horowitz[i].pj64);
    }
    check_d("8 kB, one byte", acc_sram_fit_pj(8 << 10, 1, 45), 1.25);
    check_d("32 kB, one byte", acc_sram_fit_pj(32 << 10, 1, 45), 2.5);
    check_d("word width is linear", acc_sram_fit_pj(32 << 10, 2, 45), 5.0);
    check_d("node is linear", acc_sram_fit_pj(32 << 10, 1, 22.5), 1.25);
    acc_config c;
    acc_config_default(&c);
    check_b("the default derives SRAM energy", c.energy.sram_read_pj < 0);
    c.sram_bytes[ACC_IFMAP] = 16 << 10;
    c.sram_bytes[ACC_FILTER] = 1 << 20;
    check_b("1 MiB costs more per access than 16 kB",
            acc_sram_word_pj(&c, ACC_FILTER, false) > acc_sram_word_pj(&c, ACC_IFMAP, false));
    check_d("1 MiB read, one byte", acc_sram_word_pj(&c, ACC_FILTER, false), 1.25 * sqrt(128.0));
    check_d("writes as reads", acc_sram_word_pj(&c, ACC_FILTER, true), 1.25 * sqrt(128.0));
    c.energy.sram_read_pj = 2.5;
    check_d("a config value wins", acc_sram_word_pj(&c, ACC_FILTER, false), 2.5);
    check_d("the other stays derived", acc_sram_word_pj(&c, ACC_FILTER, true),
            1.25 * sqrt(128.0));
    /* 1 MiB of 0.346 um^2 cells at 70% efficiency: 4.147 mm^2 */
    check_d("SRAM area", acc_sram_area_mm2(1 << 20, 45), 8388608 * 0.346 / 0.7 * 1e-6);
    check_d("area scales with the node squared", acc_sram_area_mm2(1 << 20, 22.5),
            acc_sram_area_mm2(1 << 20, 45) / 4);
    c.word_bytes = 1;
    c.depth = 1;
    check_d("an 8-bit PE", acc_pe_area_mm2(&c), 318e-6);
    c.rows = c.cols = 32;
    c.sram_bytes[ACC_OFMAP] = 64 << 10;
    check_d("array and buffers", acc_area_mm2(&c),
            1024 * 318e-6 + acc_sram_area_mm2(16 << 10, 45) +
                acc_sram_area_mm2(1 << 20, 45) + acc_sram_area_mm2(64 << 10, 45));

    /* The modeled energy uses each buffer's own figure. */
    acc_config d;
    acc_config_default(&d);
    d.rows = d.cols = 4;
    d.bw_unlimited = true;
    acc_layer l = gemm_layer("g", 8, 6, 10, 1);
    acc_result small, big;
    for (int op = 0; op < ACC_NOPERANDS; op++)
        d.sram_bytes[op] = 16 << 10;
    small = model(&d, NULL, &l);
    for (int op = 0; op < ACC_NOPERANDS; op++)
        d.sram_bytes[op] = 1 << 20;
    big = model(&d, NULL, &l);
    check_i("same accesses", acc_result_sram_reads(&big), acc_result_sram_reads(&small));
    check_d("SRAM energy grows with the buffers", big.energy.sram / small.energy.sram,
            sqrt((double)(1 << 20) / (16 << 10)));
    double want = 0;
    for (int op = 0; op < ACC_NOPERANDS; op++)
        want += (double)(small.sram_reads[op] + small.sram_writes[op]) *
                acc_sram_fit_pj(16 << 10, 1, 45);
    check_d("SRAM energy of the 16 kB buffers", small.energy.sram, want);

    /* Sweep: the CSV's energy split adds up, and an area budget. */
    acc_sweep_spec s;
    char err[512];
    check_b(err, acc_sweep_spec_parse("4x4,64x64", "os", "16,1024", &s, err, sizeof err));
    acc_config cfg;
    check_b("16 kB 4x4 in budget", acc_sweep_config(&d, &s, 0, &cfg));
    check_i("config 0 sram", cfg.sram_bytes[ACC_FILTER], 16 << 10);
    check_i("config 3 rows", (acc_sweep_config(&d, &s, 3, &cfg), cfg.rows), 64);
    s.max_area_mm2 = 5;
    int in = 0;
    for (int i = 0; i < acc_sweep_count(&s); i++)
        in += acc_sweep_config(&d, &s, i, &cfg);
    check_i("configs within 5 mm^2 (the 1 MiB ones are 12.4 mm^2)", in, 2);
    FILE *f = fopen(path_in(tmpdir, "area.csv"), "w+");
    check_b(err, acc_sweep(&d, NULL, &s, &l, 1, f, NULL, err, sizeof err));
    rewind(f);
    char line[4096];
    int rows = 0;
    bool header = fgets(line, sizeof line, f) &&
                  strstr(line, ",energy_pj,energy_mac_pj,energy_reg_pj,energy_sram_pj,"
                               "energy_dram_pj,energy_vector_pj,energy_static_pj,") &&
                  strstr(line, ",area_mm2\n");
    check_b("sweep header has the split and the area", header);
    while (fgets(line, sizeof line, f))
        rows++;
    fclose(f);
    check_i("sweep rows within the budget", rows, 2);
    check_b("bad budget", !acc_sweep_area_parse("-3", &s.max_area_mm2, err, sizeof err));
    check_s("bad budget message", err,
            "tec: error: bad area budget '-3': expected a positive number of mm^2");
    group_end();
}

int main(int argc, char **argv)
{
    if (argc > 1)
        srcdir = argv[1];
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_accel.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    test_os();
    test_element_sizes();
    test_ws();
    test_is();
    test_conv_ifmap();
    test_tiling_orders();
    test_streaming();
    test_fold_timing();
    test_streamed_reuse();
    test_depth_and_batch();
    test_vector();
    test_padding();
    test_model_errors();
    test_config_presets();
    test_config_errors();
    test_config_warnings();
    test_topology_read();
    test_resnets();
    test_topology_errors();
    test_search();
    test_network_reports();
    test_energy_model();
    remove_tmpdir();
    printf("%d passed, %d failed\n", passes, failures);
    return test_exit("test_accel");
}
