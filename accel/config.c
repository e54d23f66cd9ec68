/* accel/config.c — hardware configs: SCALE-Sim's .cfg INI format read with
 * libinih, plus tec's own [tec_architecture], [tec_energy] and [tec_vector]
 * sections.  doc/accel.md lists every key. */
#include "accel/accel.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* How a key's text is turned into a value. */
typedef enum {
    KEY_INT,        /* integer in [1, max] */
    KEY_REAL_POS,   /* real > 0 */
    KEY_REAL_NN,    /* real >= 0 */
    KEY_DATAFLOW,   /* os | ws | is */
    KEY_BWMODE,     /* USER | CALC */
    KEY_BANDWIDTH,  /* positive reals, comma separated (per bank): minimum */
    KEY_STRING,
    KEY_IGNORED     /* a SCALE-Sim key tec does not model: accepted, unused */
} key_type;

/* Where a key's value goes in acc_config (offsetof from the struct start). */
typedef enum {
    F_RUN_NAME, F_ROWS, F_COLS, F_DEPTH, F_SRAM_IFMAP, F_SRAM_FILTER,
    F_SRAM_OFMAP, F_DATAFLOW, F_BWMODE, F_BANDWIDTH, F_WORD_BYTES, F_CLOCK, F_DRAM_LATENCY,
    F_LANES, F_TECH_NM, F_MAC_PJ, F_REG_PJ, F_SRAM_READ_PJ, F_SRAM_WRITE_PJ,
    F_DRAM_READ_PJ, F_DRAM_WRITE_PJ, F_VECTOR_OP_PJ, F_STATIC_MW, F_NONE
} key_field;

/* One known key: its section, canonical spelling (keys match without case,
 * as Python's configparser does for SCALE-Sim), type and whether the model
 * cannot do without it. */
typedef struct key_def {
    const char *section;
    const char *name;
    key_type type;
    int64_t max;          /* KEY_INT upper bound */
    key_field field;
    bool required;
} key_def;

#define MAX_DIM 65536
#define MAX_KB (INT64_C(1) << 30)

static const key_def keys[] = {
    {"general", "run_name", KEY_STRING, 0, F_RUN_NAME, false},
    {"architecture_presets", "ArrayHeight", KEY_INT, MAX_DIM, F_ROWS, true},
    {"architecture_presets", "ArrayWidth", KEY_INT, MAX_DIM, F_COLS, true},
    {"architecture_presets", "IfmapSramSzkB", KEY_INT, MAX_KB, F_SRAM_IFMAP, true},
    {"architecture_presets", "FilterSramSzkB", KEY_INT, MAX_KB, F_SRAM_FILTER, true},
    {"architecture_presets", "OfmapSramSzkB", KEY_INT, MAX_KB, F_SRAM_OFMAP, true},
    {"architecture_presets", "Dataflow", KEY_DATAFLOW, 0, F_DATAFLOW, true},
    /* required unless InterfaceBandwidth = CALC (checked after parsing) */
    {"architecture_presets", "Bandwidth", KEY_BANDWIDTH, 0, F_BANDWIDTH, false},
    {"architecture_presets", "IfmapOffset", KEY_IGNORED, 0, F_NONE, false},
    {"architecture_presets", "FilterOffset", KEY_IGNORED, 0, F_NONE, false},
    {"architecture_presets", "OfmapOffset", KEY_IGNORED, 0, F_NONE, false},
    {"architecture_presets", "MemoryBanks", KEY_IGNORED, 0, F_NONE, false},
    {"run_presets", "InterfaceBandwidth", KEY_BWMODE, 0, F_BWMODE, false},
    {"tec_architecture", "ClockMHz", KEY_REAL_POS, 0, F_CLOCK, false},
    {"tec_architecture", "WordBytes", KEY_INT, 64, F_WORD_BYTES, false},
    {"tec_architecture", "ArrayDepth", KEY_INT, 4096, F_DEPTH, false},
    {"tec_architecture", "DramLatency", KEY_REAL_NN, 0, F_DRAM_LATENCY, false},
    {"tec_architecture", "TechNm", KEY_REAL_POS, 0, F_TECH_NM, false},
    {"tec_energy", "MacPj", KEY_REAL_NN, 0, F_MAC_PJ, false},
    {"tec_energy", "RegPj", KEY_REAL_NN, 0, F_REG_PJ, false},
    {"tec_energy", "SramReadPj", KEY_REAL_NN, 0, F_SRAM_READ_PJ, false},
    {"tec_energy", "SramWritePj", KEY_REAL_NN, 0, F_SRAM_WRITE_PJ, false},
    {"tec_energy", "DramReadPjPerByte", KEY_REAL_NN, 0, F_DRAM_READ_PJ, false},
    {"tec_energy", "DramWritePjPerByte", KEY_REAL_NN, 0, F_DRAM_WRITE_PJ, false},
    {"tec_energy", "StaticPowerMw", KEY_REAL_NN, 0, F_STATIC_MW, false},
    {"tec_vector", "Lanes", KEY_INT, INT64_C(1) << 30, F_LANES, false},
    {"tec_vector", "OpPj", KEY_REAL_NN, 0, F_VECTOR_OP_PJ, false},
};
#define NKEYS ((int)(sizeof keys / sizeof keys[0]))

/* Sections of SCALE-Sim (and its later versions) that tec does not model:
 * accepted whole, whatever their keys. */
static const char *const ignored_sections[] = {"network_presets", "sparsity", "layout"};
#define NIGNORED ((int)(sizeof ignored_sections / sizeof ignored_sections[0]))

/* State of one load: the file, the line the reader is on, which keys were
 * seen, and the first error (later ones are not reported). */
typedef struct cfg_load {
    const char *path;
    bool strict;          /* warnings are errors */
    FILE *warn;           /* where warnings go (NULL: dropped) */
    FILE *f;
    int line;
    bool seen[NKEYS];
    bool bw_calc;
    acc_config *c;
    bool failed;
    int err_line;
    char *err;
    size_t errlen;
} cfg_load;

static void load_error(cfg_load *L, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void load_error(cfg_load *L, const char *fmt, ...)
{
    if (L->failed)
        return;
    L->failed = true;
    L->err_line = L->line;
    int k = L->line > 0 ? snprintf(L->err, L->errlen, "%s:%d: error: ", L->path, L->line)
                        : snprintf(L->err, L->errlen, "%s: error: ", L->path);
    if (k < 0 || (size_t)k >= L->errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->err + k, L->errlen - (size_t)k, fmt, ap);
    va_end(ap);
}

static void load_warning(cfg_load *L, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A suspicious but readable input: an error under strict, else one
 * "file:line: warning: ..." line (no line number when line is 0). */
static void load_warning(cfg_load *L, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (L->strict) {
        int saved = L->line;
        L->line = line;
        load_error(L, "%s", msg);
        L->line = saved;
        return;
    }
    if (!L->warn)
        return;
    if (line > 0)
        fprintf(L->warn, "%s:%d: warning: %s\n", L->path, line, msg);
    else
        fprintf(L->warn, "%s: warning: %s\n", L->path, msg);
}

/* Edit distance of two key names, without case, capped at 3 (only "close"
 * matters: a misspelling is one or two edits away). */
static int key_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 64 || m > 64 || (n > m ? n - m : m - n) > 2)
        return 3;
    int prev[65], cur[65];
    for (size_t j = 0; j <= m; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= m; j++) {
            int sub = prev[j - 1] + (tolower((unsigned char)a[i - 1]) !=
                                     tolower((unsigned char)b[j - 1]));
            int del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, sizeof(int) * (m + 1));
    }
    return prev[m] < 3 ? prev[m] : 3;
}

/* The known key of `section` closest to `name` (at most two edits), or NULL. */
static const char *closest_key(const char *section, const char *name)
{
    const char *best = NULL;
    int bd = 3;
    for (int i = 0; i < NKEYS; i++)
        if (strcasecmp(section, keys[i].section) == 0) {
            int dist = key_distance(name, keys[i].name);
            if (dist < bd)
                bd = dist, best = keys[i].name;
        }
    return best;
}

/* The fgets-style reader inih calls once per line; counting lines here gives
 * diagnostics a line number (the Debian build's handler gets none). */
static char *cfg_reader(char *str, int num, void *stream)
{
    cfg_load *L = stream;
    if (!fgets(str, num, L->f))
        return NULL;
    L->line++;
    size_t len = strlen(str);
    if (len == (size_t)num - 1 && str[len - 1] != '\n' && !feof(L->f)) {
        load_error(L, "line too long (at most %d characters)", num - 3);
        int ch;
        while ((ch = fgetc(L->f)) != EOF && ch != '\n')
            ;
        str[0] = '\0';     /* inih sees an empty line */
    }
    return str;
}

static bool parse_int(const char *v, int64_t max, int64_t *out)
{
    if (!*v)
        return false;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || *end || x < 1 || x > max)
        return false;
    *out = x;
    return true;
}

static bool parse_real(const char *v, bool positive, double *out)
{
    if (!*v)
        return false;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || *end || !isfinite(x) || x < 0 || (positive && x == 0))
        return false;
    *out = x;
    return true;
}

/* Bandwidth may list one value per memory bank (SCALE-Sim); the slowest
 * bank limits, so the minimum is used. */
static bool parse_bandwidth(const char *v, double *out)
{
    char buf[256];
    if (strlen(v) >= sizeof buf)
        return false;
    strcpy(buf, v);
    double best = 0;
    bool any = false;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ' || *tok == '\t')
            tok++;
        char *e = tok + strlen(tok);
        while (e > tok && (e[-1] == ' ' || e[-1] == '\t'))
            *--e = '\0';
        double x;
        if (!parse_real(tok, true, &x))
            return false;
        if (!any || x < best)
            best = x;
        any = true;
    }
    if (!any)
        return false;
    *out = best;
    return true;
}

static void store_int(acc_config *c, key_field f, int64_t x)
{
    switch (f) {
    case F_ROWS: c->rows = x; break;
    case F_COLS: c->cols = x; break;
    case F_DEPTH: c->depth = x; break;
    case F_SRAM_IFMAP: c->sram_bytes[ACC_IFMAP] = x * 1024; break;
    case F_SRAM_FILTER: c->sram_bytes[ACC_FILTER] = x * 1024; break;
    case F_SRAM_OFMAP: c->sram_bytes[ACC_OFMAP] = x * 1024; break;
    case F_WORD_BYTES: c->word_bytes = x; break;
    case F_LANES: c->vector_lanes = x; break;
    default: break;
    }
}

static void store_real(acc_config *c, key_field f, double x)
{
    switch (f) {
    case F_BANDWIDTH: c->bandwidth = x; break;
    case F_CLOCK: c->clock_mhz = x; break;
    case F_DRAM_LATENCY: c->dram_latency = x; break;
    case F_TECH_NM: c->tech_nm = x; break;
    case F_MAC_PJ: c->energy.mac_pj = x; break;
    case F_REG_PJ: c->energy.reg_pj = x; break;
    case F_SRAM_READ_PJ: c->energy.sram_read_pj = x; break;
    case F_SRAM_WRITE_PJ: c->energy.sram_write_pj = x; break;
    case F_DRAM_READ_PJ: c->energy.dram_read_pj_per_byte = x; break;
    case F_DRAM_WRITE_PJ: c->energy.dram_write_pj_per_byte = x; break;
    case F_VECTOR_OP_PJ: c->energy.vector_op_pj = x; break;
    case F_STATIC_MW: c->energy.static_mw = x; break;
    default: break;
    }
}

static bool is_tec_section(const char *s)
{
    return strncasecmp(s, "tec_", 4) == 0;
}

/* inih callback: one name = value pair.  Returns 0 to flag an error (inih
 * then reports this line); we keep our own message for it. */
static int cfg_handler(void *user, const char *section, const char *name,
                       const char *value)
{
    cfg_load *L = user;
    if (L->failed)
        return 1;            /* only the first error is reported */
    int i;
    for (i = 0; i < NKEYS; i++)
        if (strcasecmp(section, keys[i].section) == 0 &&
            strcasecmp(name, keys[i].name) == 0)
            break;
    if (i == NKEYS) {
        /* SCALE-Sim's sections that tec does not model are accepted whole.
         * Any other unknown key or section is most likely a typo whose key
         * would silently take its default (a misspelled InterfaceBandwidth
         * turns CALC into USER): a warning, an error under --strict.  tec's
         * own sections are ours, so a typo there is always an error. */
        for (int j = 0; j < NIGNORED; j++)
            if (strcasecmp(section, ignored_sections[j]) == 0)
                return 1;
        bool known_section = false;
        for (int j = 0; j < NKEYS; j++)
            if (strcasecmp(section, keys[j].section) == 0)
                known_section = true;
        const char *near = known_section ? closest_key(section, name) : NULL;
        const key_def *home = NULL;    /* the same key in another section */
        for (int j = 0; j < NKEYS && !home; j++)
            if (strcasecmp(name, keys[j].name) == 0)
                home = &keys[j];
        char hint[160] = "";
        if (home)
            snprintf(hint, sizeof hint, " (%s belongs in [%s])", home->name, home->section);
        else if (near)
            snprintf(hint, sizeof hint, " (did you mean %s?)", near);
        if (is_tec_section(section)) {
            if (known_section)
                load_error(L, "unknown key %s in [%s]%s", name, section, hint);
            else
                load_error(L, "unknown section [%s]%s", section, hint);
            return 0;
        }
        if (known_section)
            load_warning(L, L->line, "unknown key %s in [%s] is ignored%s", name, section,
                         hint);
        else
            load_warning(L, L->line, "unknown section [%s] is ignored%s", section, hint);
        return L->failed ? 0 : 1;
    }
    const key_def *k = &keys[i];
    if (L->seen[i]) {
        load_error(L, "duplicate key %s in [%s]", k->name, k->section);
        return 0;
    }
    L->seen[i] = true;
    acc_config *c = L->c;
    const char *expect = NULL;
    char range[64];
    switch (k->type) {
    case KEY_INT: {
        int64_t x;
        if (parse_int(value, k->max, &x))
            store_int(c, k->field, x);
        else {
            snprintf(range, sizeof range, "an integer from 1 to %lld",
                     (long long)k->max);
            expect = range;
        }
        break;
    }
    case KEY_REAL_POS:
    case KEY_REAL_NN: {
        double x;
        if (parse_real(value, k->type == KEY_REAL_POS, &x))
            store_real(c, k->field, x);
        else
            expect = k->type == KEY_REAL_POS ? "a positive number"
                                             : "a non-negative number";
        break;
    }
    case KEY_DATAFLOW:
        if (!acc_dataflow_parse(value, &c->dataflow))
            expect = "os, ws or is";
        break;
    case KEY_BWMODE:
        if (strcasecmp(value, "USER") == 0)
            L->bw_calc = false;
        else if (strcasecmp(value, "CALC") == 0)
            L->bw_calc = true;
        else
            expect = "USER or CALC";
        break;
    case KEY_BANDWIDTH: {
        double x;
        if (parse_bandwidth(value, &x))
            c->bandwidth = x;
        else
            expect = "a positive number of words per cycle (or a comma-separated list, one per bank)";
        break;
    }
    case KEY_STRING:
        snprintf(c->run_name, sizeof c->run_name, "%s", value);
        break;
    case KEY_IGNORED:
        break;
    }
    if (expect) {
        load_error(L, "bad value '%s' for %s in [%s]: expected %s", value,
                   k->name, k->section, expect);
        return 0;
    }
    return 1;
}

static int find_key(const char *name)
{
    for (int i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].name, name) == 0)
            return i;
    return -1;
}

bool acc_config_load(const char *path, bool strict, FILE *warn, acc_config *c, char *err,
                     size_t errlen)
{
    acc_config_default(c);
    cfg_load L = {.path = path, .strict = strict, .warn = warn, .c = c, .err = err,
                  .errlen = errlen};
    L.f = fopen(path, "r");
    if (!L.f) {
        snprintf(err, errlen, "%s: error: cannot open: %s", path, strerror(errno));
        return false;
    }
    errno = 0;
    int rc = ini_parse_stream(cfg_reader, &L, cfg_handler, &L);
    bool read_error = ferror(L.f);
    int saved = errno;
    fclose(L.f);
    if (read_error) {
        snprintf(err, errlen, "%s: error: cannot read: %s", path, strerror(saved));
        return false;
    }
    /* rc > 0 is the first line inih found wrong: either a line our handler
     * rejected (message already written) or a syntax error it found alone. */
    if (rc > 0 && (!L.failed || rc < L.err_line)) {
        L.failed = false;
        L.line = rc;
        load_error(&L, "malformed line (expected 'key = value' or '[section]')");
    }
    if (rc < 0 && !L.failed) {
        snprintf(err, errlen, "%s: error: out of memory while reading", path);
        return false;
    }
    if (L.failed)
        return false;
    for (int i = 0; i < NKEYS; i++)
        if (keys[i].required && !L.seen[i]) {
            snprintf(err, errlen, "%s: error: missing key %s in [%s]", path,
                     keys[i].name, keys[i].section);
            return false;
        }
    c->bw_unlimited = L.bw_calc;
    if (!L.seen[find_key("InterfaceBandwidth")]) {
        load_warning(&L, 0, "missing key InterfaceBandwidth in [run_presets]: "
                     "bandwidth mode USER (stalls at Bandwidth words per cycle)");
        if (L.failed)
            return false;
    }
    int bw = find_key("Bandwidth");
    if (!L.bw_calc && !L.seen[bw]) {
        snprintf(err, errlen,
                 "%s: error: missing key Bandwidth in [architecture_presets] "
                 "(needed when InterfaceBandwidth is USER)", path);
        return false;
    }
    return true;
}

void acc_config_default(acc_config *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->run_name, sizeof c->run_name, "tec_accel");
    c->rows = 32;
    c->cols = 32;
    c->depth = 1;
    c->dataflow = ACC_DF_OS;
    for (int o = 0; o < ACC_NOPERANDS; o++)
        c->sram_bytes[o] = 64 * 1024;
    c->bw_unlimited = false;
    c->bandwidth = 10;
    c->word_bytes = 1;
    c->clock_mhz = 1000;
    c->vector_lanes = 64;
    /* Order-of-magnitude 8-bit numbers after Horowitz (ISSCC 2014, 45 nm):
     * see doc/accel.md.  SRAM accesses are derived from each buffer's size
     * (accel/energy.c).  Static power is not guessed: 0 unless given. */
    c->tech_nm = 45;
    c->energy.mac_pj = 0.23;
    c->energy.reg_pj = 0.05;
    c->energy.sram_read_pj = -1;
    c->energy.sram_write_pj = -1;
    c->energy.dram_read_pj_per_byte = 160;
    c->energy.dram_write_pj_per_byte = 160;
    c->energy.vector_op_pj = 0.5;
    c->energy.static_mw = 0;
}

#define CHECK_INT(expr, key, max)                                              \
    do {                                                                       \
        if ((expr) < 1 || (expr) > (max)) {                                    \
            snprintf(err, errlen,                                              \
                     "tec: error: accelerator config: %s must be from 1 to %lld", \
                     key, (long long)(max));                                   \
            return false;                                                      \
        }                                                                      \
    } while (0)

#define CHECK_REAL(expr, key, positive)                                        \
    do {                                                                       \
        if (!isfinite(expr) || (expr) < 0 || ((positive) && (expr) == 0)) {    \
            snprintf(err, errlen,                                              \
                     "tec: error: accelerator config: %s must be %s", key,    \
                     (positive) ? "a positive number" : "a non-negative number"); \
            return false;                                                      \
        }                                                                      \
    } while (0)

bool acc_config_check(const acc_config *c, char *err, size_t errlen)
{
    CHECK_INT(c->rows, "ArrayHeight", MAX_DIM);
    CHECK_INT(c->cols, "ArrayWidth", MAX_DIM);
    CHECK_INT(c->depth, "ArrayDepth", 4096);
    CHECK_INT(c->sram_bytes[ACC_IFMAP] / 1024, "IfmapSramSzkB", MAX_KB);
    CHECK_INT(c->sram_bytes[ACC_FILTER] / 1024, "FilterSramSzkB", MAX_KB);
    CHECK_INT(c->sram_bytes[ACC_OFMAP] / 1024, "OfmapSramSzkB", MAX_KB);
    CHECK_INT(c->word_bytes, "WordBytes", 64);
    CHECK_INT(c->vector_lanes, "Lanes", INT64_C(1) << 30);
    if ((unsigned)c->dataflow >= ACC_NDATAFLOWS) {
        snprintf(err, errlen, "tec: error: accelerator config: bad Dataflow");
        return false;
    }
    if (!c->bw_unlimited)
        CHECK_REAL(c->bandwidth, "Bandwidth", true);
    CHECK_REAL(c->clock_mhz, "ClockMHz", true);
    CHECK_REAL(c->dram_latency, "DramLatency", false);
    CHECK_REAL(c->energy.mac_pj, "MacPj", false);
    CHECK_REAL(c->energy.reg_pj, "RegPj", false);
    CHECK_REAL(c->tech_nm, "TechNm", true);
    if (c->energy.sram_read_pj != -1)      /* -1: derived from the size */
        CHECK_REAL(c->energy.sram_read_pj, "SramReadPj", false);
    if (c->energy.sram_write_pj != -1)
        CHECK_REAL(c->energy.sram_write_pj, "SramWritePj", false);
    CHECK_REAL(c->energy.dram_read_pj_per_byte, "DramReadPjPerByte", false);
    CHECK_REAL(c->energy.dram_write_pj_per_byte, "DramWritePjPerByte", false);
    CHECK_REAL(c->energy.vector_op_pj, "OpPj", false);
    CHECK_REAL(c->energy.static_mw, "StaticPowerMw", false);
    return true;
}

void acc_config_write(FILE *out, const acc_config *c)
{
    fprintf(out, "[general]\nrun_name = %s\n\n", c->run_name);
    fprintf(out, "[architecture_presets]\n");
    fprintf(out, "ArrayHeight = %lld\nArrayWidth = %lld\n", (long long)c->rows,
            (long long)c->cols);
    fprintf(out, "IfmapSramSzkB = %lld\nFilterSramSzkB = %lld\nOfmapSramSzkB = %lld\n",
            (long long)(c->sram_bytes[ACC_IFMAP] / 1024),
            (long long)(c->sram_bytes[ACC_FILTER] / 1024),
            (long long)(c->sram_bytes[ACC_OFMAP] / 1024));
    fprintf(out, "Dataflow = %s\n", acc_dataflow_name(c->dataflow));
    if (!c->bw_unlimited)
        fprintf(out, "Bandwidth = %.17g\n", c->bandwidth);
    fprintf(out, "\n[run_presets]\nInterfaceBandwidth = %s\n\n",
            c->bw_unlimited ? "CALC" : "USER");
    fprintf(out, "[tec_architecture]\nClockMHz = %.17g\nWordBytes = %lld\nArrayDepth = %lld\n"
                 "DramLatency = %.17g\nTechNm = %.17g\n\n",
            c->clock_mhz, (long long)c->word_bytes, (long long)c->depth, c->dram_latency,
            c->tech_nm);
    const acc_energy *e = &c->energy;
    fprintf(out, "[tec_energy]\nMacPj = %.17g\nRegPj = %.17g\n", e->mac_pj, e->reg_pj);
    if (e->sram_read_pj >= 0)
        fprintf(out, "SramReadPj = %.17g\n", e->sram_read_pj);
    if (e->sram_write_pj >= 0)
        fprintf(out, "SramWritePj = %.17g\n", e->sram_write_pj);
    fprintf(out, "DramReadPjPerByte = %.17g\nDramWritePjPerByte = %.17g\n"
                 "StaticPowerMw = %.17g\n\n",
            e->dram_read_pj_per_byte, e->dram_write_pj_per_byte, e->static_mw);
    fprintf(out, "[tec_vector]\nLanes = %lld\nOpPj = %.17g\n",
            (long long)c->vector_lanes, e->vector_op_pj);
}
