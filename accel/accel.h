/* accel/accel.h — analytical performance and energy model of a systolic-array
 * GEMM accelerator (the `acc_` module).
 *
 * A network is a list of layers.  Every GEMM-like layer is `batch`
 * independent GEMMs C[M,N] = A[M,K] * B[K,N] (A: ifmap after im2col, B:
 * filter, C: ofmap); every other layer is work for the vector unit.  The
 * model is closed form (no cycle-by-cycle simulation; stalls come fold by
 * fold, identical folds counted rather than replayed), so a layer costs a
 * few microseconds and whole design-space sweeps run in seconds.
 * doc/accel.md states every formula and assumption.
 *
 * Error reporting: functions that can fail return false and write one line
 * without a trailing newline into err[errlen], GNU style:
 *   "file:line: error: ..." (config), "file:line:col: error: ..." (topology),
 *   "file: error: ..." when there is no line.
 */
#ifndef TEC_ACCEL_H
#define TEC_ACCEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---------------------------------------------------------------- dataflows */

/* Which operand stays in the processing elements while the others stream:
 * outputs (OS), weights (WS) or inputs (IS), as in SCALE-Sim. */
typedef enum { ACC_DF_OS, ACC_DF_WS, ACC_DF_IS, ACC_NDATAFLOWS } acc_dataflow;

const char *acc_dataflow_name(acc_dataflow d);            /* "os" */
bool acc_dataflow_parse(const char *s, acc_dataflow *out); /* "os"/"ws"/"is" */

/* The three operands, in SCALE-Sim's names. */
typedef enum { ACC_IFMAP, ACC_FILTER, ACC_OFMAP, ACC_NOPERANDS } acc_operand;
const char *acc_operand_name(acc_operand o);               /* "ifmap" */

/* ---------------------------------------------------------------- hardware */

/* Energy table.  Accesses are counted in words (config WordBytes); DRAM is
 * priced per byte because DRAM energy is quoted per bit. */
typedef struct acc_energy {
    double mac_pj;                 /* one multiply-accumulate */
    double reg_pj;                 /* one operand hop between PE registers */
    double sram_read_pj;           /* one word read from an on-chip buffer;
                                      < 0: derived from the buffer's size
                                      (acc_sram_word_pj) */
    double sram_write_pj;          /* one word written to an on-chip buffer (< 0:
                                      derived) */
    double dram_read_pj_per_byte;
    double dram_write_pj_per_byte;
    double vector_op_pj;           /* one vector-unit element operation */
    double static_mw;              /* leakage + clock tree, charged per us */
} acc_energy;

/* One accelerator: a rows x cols array of PEs, each doing `depth` MACs per
 * cycle (depth > 1 models tensor-core-like dot-product units), three
 * double-buffered SRAMs, a DRAM interface and a vector unit. */
typedef struct acc_config {
    char run_name[64];
    int64_t rows, cols, depth;     /* ArrayHeight, ArrayWidth, ArrayDepth */
    acc_dataflow dataflow;
    int64_t sram_bytes[ACC_NOPERANDS];  /* Ifmap/Filter/OfmapSramSzkB * 1024 */
    bool bw_unlimited;             /* InterfaceBandwidth = CALC: never stall */
    double bandwidth;              /* DRAM words per cycle (USER mode) */
    double dram_latency;           /* cycles from a DRAM read request to its first
                                      word (USER mode; requests are pipelined) */
    int64_t word_bytes;            /* bytes per operand word */
    double clock_mhz;
    int64_t vector_lanes;          /* vector-unit element ops per cycle */
    double tech_nm;                /* technology node (TechNm), for derived
                                      energies and areas */
    acc_energy energy;
} acc_config;

/* Energy and area of the hardware where the config gives no figure
 * (accel/energy.c; doc/accel.md, section 3.5, cites the sources):
 *   acc_sram_fit_pj: one word of word_bytes read from (or written to) an
 *     SRAM of `bytes`, a square-root fit to Horowitz's 45 nm points (8 kB,
 *     32 kB, 1 MB), scaled linearly with the node;
 *   acc_sram_word_pj: the config's SramReadPj/SramWritePj when given, else
 *     the fit for that operand's buffer;
 *   areas in mm^2: an SRAM's cells, one PE (depth multipliers and adders of
 *     WordBytes), and the array with its three buffers. */
double acc_sram_fit_pj(int64_t bytes, int64_t word_bytes, double tech_nm);
double acc_sram_word_pj(const acc_config *c, acc_operand op, bool write);
double acc_sram_area_mm2(int64_t bytes, double tech_nm);
double acc_pe_area_mm2(const acc_config *c);
double acc_area_mm2(const acc_config *c);

/* Fills a valid 32x32 output-stationary config with tec's documented
 * defaults (the values a SCALE-Sim file without tec sections gets). */
void acc_config_default(acc_config *c);
/* Reads a SCALE-Sim .cfg plus tec's [tec_architecture], [tec_energy] and
 * [tec_vector] sections.  On failure *c is unspecified and err says, e.g.,
 * "f.cfg: error: missing key ArrayHeight in [architecture_presets]".
 * Unknown keys and sections outside tec's own, and a missing
 * InterfaceBandwidth, are warnings written to warn ("f.cfg:7: warning: ...";
 * NULL drops them), or errors when strict. */
bool acc_config_load(const char *path, bool strict, FILE *warn, acc_config *c, char *err,
                     size_t errlen);
/* Checks ranges after a program edited a config (sweeps); "tec: error: ...". */
bool acc_config_check(const acc_config *c, char *err, size_t errlen);
/* Writes c back as a .cfg that acc_config_load reads to the same values. */
void acc_config_write(FILE *out, const acc_config *c);

/* ---------------------------------------------------------------- workload */

typedef enum { ACC_LAYER_GEMM, ACC_LAYER_VECTOR } acc_layer_kind;

/* Nesting of the three tile loops, outermost first. */
typedef enum {
    ACC_ORDER_MNK, ACC_ORDER_MKN, ACC_ORDER_NMK,
    ACC_ORDER_NKM, ACC_ORDER_KMN, ACC_ORDER_KNM, ACC_NORDERS
} acc_loop_order;
const char *acc_order_name(acc_loop_order o);              /* "mnk" */
bool acc_order_parse(const char *s, acc_loop_order *out);

/* Tile sizes of one GEMM (per batch element) and the loop order over tiles.
 * A tile larger than its dimension is clamped to it. */
typedef struct acc_tiling {
    int64_t tm, tn, tk;
    acc_loop_order order;
} acc_tiling;

/* SCALE-Sim convolution geometry, kept so a network can be written back in
 * the convolution format.  ifmap sizes include padding; channels and
 * num_filters are per layer (all groups together). */
typedef struct acc_conv {
    int64_t ifmap_h, ifmap_w, filt_h, filt_w, channels, num_filters;
    int64_t stride_h, stride_w;
} acc_conv;

/* One layer.  GEMM: `batch` GEMMs of M x N x K (groups of a grouped or
 * depthwise convolution, heads of attention).  VECTOR: vector_ops element
 * operations reading and writing the given DRAM bytes. */
typedef struct acc_layer {
    char *name;                    /* malloc'ed; acc_layers_free frees it */
    acc_layer_kind kind;
    int64_t M, N, K, batch;
    int64_t vector_ops, vector_read_bytes, vector_write_bytes;
    /* GEMM: bytes of one element of each operand (an int8 ifmap and filter
     * with an int32 ofmap: 1, 1, 4); 0 means one word (SCALE-Sim's
     * topologies).  SRAM capacity and every SRAM and DRAM count follow
     * them: n elements of b bytes are ceil(n*b / word_bytes) words. */
    int64_t elem_bytes[ACC_NOPERANDS];
    int64_t declared_K;            /* GEMM modeled from a run's counters whose reduction
                                      length depends on the data: the declared K (K is
                                      the depth that ran); else 0 */
    int64_t declared_M;            /* GEMM modeled from a run's counters: the M its
                                      declared extents give (M is what ran); else 0 */
    bool has_tiling;               /* tiling given: no search for this layer */
    acc_tiling tiling;
    bool has_conv;
    acc_conv conv;
} acc_layer;

void acc_layers_free(acc_layer *layers, int n);

/* Geometry of a convolution as SCALE-Sim reads it: M = output pixels,
 * N = filters per group, K = filt_h*filt_w*channels per group.  Fails on a
 * filter larger than the ifmap or on overflow. */
bool acc_conv_to_gemm(const acc_conv *cv, int64_t groups, acc_layer *l,
                      char *err, size_t errlen);

typedef enum { ACC_TOPO_AUTO, ACC_TOPO_CONV, ACC_TOPO_GEMM } acc_topo_format;

/* Reads a SCALE-Sim topology CSV.  AUTO: the M,N,K format when the header's
 * second column is "M", else the convolution format.  Conv rows: name,
 * IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels,
 * Num Filter, Strides [, Stride Width]; a name containing "DP" is a
 * depthwise layer (one group per channel).  GEMM rows: name, M, N, K.
 * *layers is malloc'ed (free with acc_layers_free). */
bool acc_read_topology(const char *path, acc_topo_format fmt,
                       acc_layer **layers, int *n, char *err, size_t errlen);
/* Writes the GEMM layers (vector layers have no SCALE-Sim form and are
 * skipped) in the given format; CONV needs conv geometry on every layer.
 * Groups that SCALE-Sim cannot express in one row become one row each
 * (name.g0, name.g1, ...). */
bool acc_write_topology(const char *path, acc_topo_format fmt,
                        const acc_layer *layers, int n, char *err, size_t errlen);

/* The accelerator's workload in a profile report (`tec --profile
 * --report=FILE.json` writes it under "accel_workload"; doc/profile.md
 * gives the format): the layers as acc_layer holds them, one entry per
 * layer.  `from_run` says whether counts of a run went into them.  An
 * error message instead of layers is written as {"error": "..."}. */
void acc_write_workload_json(FILE *out, const acc_layer *layers, int n, bool from_run);
void acc_write_workload_error_json(FILE *out, const char *message);
/* Reads the layers back from a saved profile report.  Errors are located,
 * "r.json:12:7: error: layer fc: \"M\" must be a positive integer"; a JSON
 * file that is not a profile report, or one without the workload, is an
 * error that says so.  *layers is malloc'ed (acc_layers_free). */
bool acc_read_profile_report(const char *path, acc_layer **layers, int *n, char *err,
                             size_t errlen);

/* Output size along one dimension of an ifmap of `in` rows (padding
 * included) under a filter of `filt` taps and stride `stride`: tec's
 * floor((in - filt) / stride) + 1, and SCALE-Sim's
 * ceil((in - filt + stride) / stride), which counts a last partial window
 * when the stride does not divide in - filt. */
int64_t acc_conv_out_floor(int64_t in, int64_t filt, int64_t stride);
int64_t acc_conv_out_ceil(int64_t in, int64_t filt, int64_t stride);

/* ---------------------------------------------------------------- model */

typedef struct acc_result acc_result;

typedef enum { ACC_SEARCH_NONE, ACC_SEARCH_DRAM, ACC_SEARCH_EDP } acc_search;
const char *acc_search_name(acc_search s);
/* Where a result's tiling comes from: "given", "untiled", "dram search" or
 * "edp search" (a search whose best was the untiled default says so too). */
const char *acc_tiling_origin(const acc_result *r);
bool acc_search_parse(const char *s, acc_search *out);

/* Run options that are not hardware. */
typedef struct acc_options {
    int64_t pad_to;                /* pad M, N, K up to multiples (0/1: off) */
    acc_search search;             /* for layers without a given tiling */
} acc_options;

/* Energy split by where it is spent (pJ). */
typedef struct acc_energy_split {
    double mac, reg, sram, dram, vector, stat;
} acc_energy_split;

/* Everything the model says about one layer (or, from acc_model_network,
 * the network total).  Counts are exact integers; access counts in words. */
struct acc_result {
    const char *name;
    acc_layer_kind kind;
    acc_dataflow dataflow;
    int64_t M, N, K, batch;        /* as modeled, i.e. after padding */
    int64_t declared_M;            /* the layer's declared_M (modeled as it ran), or 0 */
    int64_t declared_K;            /* the layer's declared_K, or 0 */
    acc_search search;             /* how the tiling was chosen (NONE: untiled) */
    bool tiling_given;             /* the layer's own tiling (no search) */
    acc_tiling tiling;             /* used tiling (tm,tn,tk clamped) */
    bool resident[ACC_NOPERANDS];  /* tile held in SRAM (else streamed) */
    int64_t tiles;                 /* tile-GEMMs over all batch elements */
    int64_t folds;                 /* array folds over all tiles */
    int64_t macs;                  /* useful MACs (vector layers: 0) */
    int64_t pad_macs;              /* extra MACs executed for padding */
    int64_t mac_slots;             /* peak MACs over the streaming cycles of
                                      all folds (excludes fill and drain) */
    int64_t vector_ops;
    int64_t compute_cycles, stall_cycles, total_cycles;
    double mapping_efficiency;     /* useful MACs / MAC slots while streaming */
    double compute_utilization;    /* useful MACs / (peak * compute_cycles) */
    double utilization;            /* useful MACs / (peak * total_cycles) */
    int64_t sram_reads[ACC_NOPERANDS], sram_writes[ACC_NOPERANDS];
    int64_t dram_reads[ACC_NOPERANDS], dram_writes[ACC_NOPERANDS];
    double dram_bw_needed;         /* DRAM words per compute cycle */
    acc_energy_split energy;
    double energy_pj;
    double latency_us;
    double edp;                    /* energy_pj * latency_us (pJ*us) */
};

int64_t acc_result_sram_reads(const acc_result *r);   /* sums over operands */
int64_t acc_result_sram_writes(const acc_result *r);
int64_t acc_result_dram_reads(const acc_result *r);
int64_t acc_result_dram_writes(const acc_result *r);

/* Models one layer.  c must be valid (acc_config_load/acc_config_check).
 * Fails, naming the layer, on a bad layer or a count past 64 bits. */
bool acc_model_layer(const acc_config *c, const acc_options *o,
                     const acc_layer *l, acc_result *r, char *err, size_t errlen);

/* Models one GEMM layer under one explicit tiling, ignoring o->search and
 * l's own tiling (the search calls this; tests use it to compare). */
bool acc_model_tiling(const acc_config *c, const acc_options *o,
                      const acc_layer *l, const acc_tiling *t,
                      acc_result *r, char *err, size_t errlen);

/* One fold of a GEMM layer's timeline (acc_trace_layer); cycles count from
 * the layer's start. */
typedef struct acc_fold_event {
    int64_t tile;                  /* tile-GEMM, counted over the batch */
    int64_t fold;                  /* fold, counted over the layer */
    int64_t start, cycles;         /* when the array computes it */
    int64_t load_start;            /* when the DRAM reads it waits for could start */
    int64_t sram[ACC_NOPERANDS];   /* array-side SRAM words: ifmap and filter
                                      reads, ofmap writes */
    int64_t dram_rd[ACC_NOPERANDS];/* DRAM words read for it (ofmap: partial sums
                                      read back) */
    int64_t dram_wr;               /* ofmap DRAM words written after it */
} acc_fold_event;

/* Receives the folds in order; returning false stops the walk. */
typedef bool (*acc_fold_fn)(const acc_fold_event *e, void *ctx);

/* Models a GEMM layer as acc_model_layer does (*r), and replays its
 * timeline fold by fold: fn sees every fold with its start cycle, and the
 * last fold (with the epilogue) ends at r->total_cycles.  *end receives
 * the cycle the replay reached (r->total_cycles unless fn stopped it). */
bool acc_trace_layer(const acc_config *c, const acc_options *o, const acc_layer *l,
                     acc_fold_fn fn, void *ctx, acc_result *r, int64_t *end,
                     char *err, size_t errlen);

/* Models every layer (results[n]) and the total: layers run one after the
 * other, so cycles, accesses and energy add; total EDP is total energy times
 * total latency.  Identical layers are modeled once.  *evals (may be NULL)
 * is increased by the number of layer models actually computed. */
bool acc_model_network(const acc_config *c, const acc_options *o,
                       const acc_layer *layers, int n, acc_result *results,
                       acc_result *total, int64_t *evals, char *err, size_t errlen);

/* Sums results of layers that run one after the other (the network total
 * of acc_model_network, or the total of one compiled function's layers):
 * counts, cycles, energy and latency add; utilization, mapping efficiency
 * and bandwidth are recomputed from the sums; EDP is total energy times
 * total latency.  The sum's name is "total", its kind GEMM, and M, N, K,
 * batch and tiling are 0. */
bool acc_results_sum(const acc_config *c, const acc_result *rs, int n, acc_result *total,
                     char *err, size_t errlen);

/* ---------------------------------------------------------------- reports */

/* One row per layer plus a "total" row; same columns in CSV and JSON. */
void acc_write_csv(FILE *out, const acc_result *rs, int n, const acc_result *total);
/* The JSON's config gives the energy table as modeled (derived SRAM
 * energies per buffer) and the area; "search" says which tiling search o
 * ran (o may be NULL: none). */
void acc_write_json(FILE *out, const acc_config *c, const acc_options *o, const acc_result *rs,
                    int n, const acc_result *total);
/* Aligned human-readable table with totals. */
/* The "config" fields of the energy table as modeled and the area (a
 * fragment: ",\n    \"key\": value" per field). */
void acc_write_json_energy(FILE *out, const acc_config *c);
void acc_print_table(FILE *out, const acc_config *c, const acc_result *rs, int n,
                     const acc_result *total);

/* Writes the network's timeline as a Chrome/Perfetto trace-event JSON:
 * the layers one after the other, every GEMM layer's folds on the array's
 * track (acc_trace_layer) with their SRAM and DRAM words per operand, and
 * the DRAM reads and writes on one track per operand.  Stops adding events
 * after max_events (0: no limit); *events receives how many it wrote. */
bool acc_write_trace(FILE *out, const acc_config *c, const acc_options *o,
                     const acc_layer *layers, int n, int64_t max_events, int64_t *events,
                     char *err, size_t errlen);

/* ---------------------------------------------------------------- SCALE-Sim mode */

/* One layer's items of SCALE-Sim v2's three reports (COMPUTE_REPORT,
 * BANDWIDTH_REPORT, DETAILED_ACCESS_REPORT) in its CALC bandwidth mode,
 * per operand (ifmap, filter, ofmap): counts are SRAM reads (ofmap: writes)
 * and DRAM reads (ofmap: writes) in words; utilizations in percent. */
typedef struct acc_ss_report {
    int64_t total_cycles, stall_cycles;
    double overall_util, mapping_eff, compute_util;
    int64_t sram_start[ACC_NOPERANDS], sram_stop[ACC_NOPERANDS];
    int64_t sram_count[ACC_NOPERANDS];
    int64_t dram_start[ACC_NOPERANDS], dram_stop[ACC_NOPERANDS];
    int64_t dram_count[ACC_NOPERANDS];
    double sram_bw[ACC_NOPERANDS], dram_bw[ACC_NOPERANDS];
} acc_ss_report;

/* SCALE-Sim's numbers for one group of a GEMM layer (a layer of batch G is
 * G such SCALE-Sim layers): its conv geometry when it has one (ceil output
 * sizes), else SCALE-Sim's reading of an M,N,K row.  accel/scalesim.c says
 * how; doc/accel.md lists the differences from tec's own model. */
bool acc_scalesim_layer(const acc_config *c, const acc_layer *l, acc_ss_report *r,
                        char *err, size_t errlen);
/* Do two layers give the same SCALE-Sim report (same conv geometry or, for
 * plain GEMMs, the same M, N, K and batch)? */
bool acc_same_scalesim_layer(const acc_layer *a, const acc_layer *b);
/* Writes DIR/COMPUTE_REPORT.csv, BANDWIDTH_REPORT.csv and
 * DETAILED_ACCESS_REPORT.csv in SCALE-Sim's format; layer i is written
 * rows[i] times (its groups), with consecutive LayerIDs. */
bool acc_scalesim_write_reports(const char *dir, const acc_ss_report *rs, const int64_t *rows,
                                int n, char *err, size_t errlen);

/* ---------------------------------------------------------------- sweeps */

#define ACC_SWEEP_MAX 32

/* The grid: every array shape x dataflow x SRAM size (the size applies to
 * each of the three buffers). */
typedef struct acc_sweep_spec {
    int nshapes;
    int64_t rows[ACC_SWEEP_MAX], cols[ACC_SWEEP_MAX];
    int ndataflows;
    acc_dataflow dataflows[ACC_NDATAFLOWS];
    int nsrams;
    int64_t sram_kb[ACC_SWEEP_MAX];
    double max_area_mm2;           /* > 0: leave out configurations larger than
                                      this (acc_area_mm2) */
} acc_sweep_spec;

/* Parses "8x8,32x32", "os,ws,is" and "64,256"; a NULL string keeps the
 * default grid's list (8x8..128x128, os/ws/is, 16..1024 kB: 105 configs). */
bool acc_sweep_spec_parse(const char *shapes, const char *dataflows,
                          const char *srams, acc_sweep_spec *s,
                          char *err, size_t errlen);
int acc_sweep_count(const acc_sweep_spec *s);
/* Configuration i (0 <= i < acc_sweep_count) of the grid, shapes outermost,
 * then dataflows, then SRAM sizes; the rest comes from base.  False when it
 * is larger than s->max_area_mm2 (the sweep leaves it out). */
bool acc_sweep_config(const acc_config *base, const acc_sweep_spec *s, int i, acc_config *c);
/* Parses an area budget in mm^2 ("12.5"); "tec: error: ..." otherwise. */
bool acc_sweep_area_parse(const char *str, double *mm2, char *err, size_t errlen);

/* Models the network on every configuration of the grid (the rest of each
 * configuration comes from base) and writes one CSV row per configuration
 * within the area budget, with the energy split and the area.
 * *evals (may be NULL) receives the number of layer models computed. */
bool acc_sweep(const acc_config *base, const acc_options *o,
               const acc_sweep_spec *s, const acc_layer *layers, int n,
               FILE *csv, int64_t *evals, char *err, size_t errlen);

#endif
