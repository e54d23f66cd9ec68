/* runtime/aot_runtime.c — the runtime of an ahead-of-time library.
 *
 * This file is not part of tec itself: `tec --emit=lib` copies it, as
 * text, into every library it writes (runtime/aot.c), between the kernels
 * and the tables that describe the network.  It knows no network: every
 * function takes the tec_aot_net table that the generated code fills in
 * (buffers, inputs and outputs, the calls, the embedded weights), and the
 * generated public functions NAME_create, NAME_run ... call these.
 *
 * An instance owns all the storage a run writes (temporaries, the arena of
 * the memory plan, the packed weights its load calls make), so separate
 * instances may run at the same time on different threads; the embedded
 * weights are shared and only read.  Everything here is static: the only
 * symbols a library exports are its NAME_ functions. */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum { TEC_AOT_INPUT, TEC_AOT_PARAM, TEC_AOT_OUTPUT, TEC_AOT_TEMP, TEC_AOT_CONST };

/* One buffer of the network's graph. */
typedef struct tec_aot_buf {
    const char *name;
    int role;                  /* TEC_AOT_* */
    size_t nbytes;
    int64_t arena_offset;      /* a temp placed in the arena, else -1 */
    int64_t weights_offset;    /* a param: where the embedded weights hold it */
    bool load_only;            /* a param that only load calls read */
    const char *npy_header;    /* a param: the .npy header np.save writes for it */
} tec_aot_buf;

/* What a kernel's failure codes mean (doc/codegen.md): 1..nasserts are
 * its asserts, then out of memory, integer division by zero, a float to
 * integer cast out of range. */
typedef struct tec_aot_kernel {
    const char *func;          /* the IR function */
    const char *layer;         /* the layer it computes */
    int nasserts;
    const char *const *asserts;
} tec_aot_kernel;

typedef struct tec_aot_net {
    const char *name;
    int nbufs;
    const tec_aot_buf *bufs;
    int ninputs, noutputs;
    const int *inputs, *outputs;   /* buffer indices, in the header's order */
    int nloads, ncalls;
    /* Runs load call (load) or call c on the instance's buffers and returns
     * the kernel's code; kernel[...] names it for a failure. */
    int32_t (*run_call)(bool load, int c, void *const *b, const tec_aot_kernel **kernel);
    size_t arena_bytes;
    const unsigned char *weights;  /* the embedded parameters */
    int *threads;                  /* threads of parallel loops, or NULL */
} tec_aot_net;

/* One network's storage: b[i] is buffer i's. */
typedef struct tec_aot_instance {
    const tec_aot_net *net;
    void **b;
    bool *owned;               /* b[i] was allocated here (and is freed here) */
    void *arena;
} tec_aot_instance;

static void tec_aot_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void tec_aot_error(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static void *tec_aot_alloc(size_t nbytes)
{
    size_t n = (nbytes + 63) / 64 * 64;
    void *p = aligned_alloc(64, n ? n : 64);
    if (p)
        memset(p, 0, n ? n : 64);
    return p;
}

/* Threads of parallel loops until NAME_set_threads: $TEC_NUM_THREADS when
 * it is a count from 1 to 1024, else every processor the process may use. */
static int tec_aot_default_threads(void)
{
    const char *env = getenv("TEC_NUM_THREADS");
    if (env && *env) {
        char *end;
        long n = strtol(env, &end, 10);
        if (*end == '\0' && n >= 1 && n <= 1024)
            return (int)n;
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return 1;
}

/* Reads a parameter from DIR/NAME.npy: the file must be one np.save
 * writes for the declared dtype and shape (format 1.0, a header that is
 * exactly npy_header padded with spaces and a newline, and exactly the
 * data's bytes after it). */
static void *tec_aot_read_npy(const char *dir, const tec_aot_buf *p, char *err, size_t errlen)
{
    char path[4096];
    if (strchr(p->name, '/')) {   /* (possible in a .tir program) */
        tec_aot_error(err, errlen, "%s: the parameter named \"%s\" cannot be a file name there",
                      dir, p->name);
        return NULL;
    }
    if ((size_t)snprintf(path, sizeof path, "%s/%s.npy", dir, p->name) >= sizeof path) {
        tec_aot_error(err, errlen, "%s/%s.npy: path too long", dir, p->name);
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        tec_aot_error(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t want = strlen(p->npy_header), hlen = 0;
    unsigned char pre[10];
    char head[1024];
    void *data = NULL;
    bool ok = fread(pre, 1, 10, f) == 10 && memcmp(pre, "\x93NUMPY\x01\x00", 8) == 0 &&
              (hlen = (size_t)(pre[8] | pre[9] << 8)) > want && hlen <= sizeof head &&
              fread(head, 1, hlen, f) == hlen && memcmp(head, p->npy_header, want) == 0 &&
              head[hlen - 1] == '\n';
    for (size_t i = want; ok && i < hlen - 1; i++)
        ok = head[i] == ' ';
    if (!ok) {
        tec_aot_error(err, errlen, "%s: not a .npy file as np.save writes one with the header "
                      "%s", path, p->npy_header);
        goto out;
    }
    if (!(data = tec_aot_alloc(p->nbytes))) {
        tec_aot_error(err, errlen, "%s: out of memory for %zu bytes", path, p->nbytes);
        goto out;
    }
    if (fread(data, 1, p->nbytes, f) != p->nbytes || fgetc(f) != EOF) {
        tec_aot_error(err, errlen, "%s: the data is not %zu bytes long", path, p->nbytes);
        free(data);
        data = NULL;
    }
out:
    fclose(f);
    return data;
}

static void tec_aot_free(tec_aot_instance *in)
{
    if (!in)
        return;
    for (int i = 0; in->b && in->owned && i < in->net->nbufs; i++)
        if (in->owned[i])
            free(in->b[i]);
    free(in->b);
    free(in->owned);
    free(in->arena);
    free(in);
}

/* "in layer L: in @f: ..." as tec says it. */
static void tec_aot_call_error(const tec_aot_kernel *k, bool load, int32_t code, char *err,
                               size_t errlen)
{
    const char *at = load ? " (at load)" : "";
    if (code >= 1 && code <= k->nasserts)
        tec_aot_error(err, errlen, "in layer %s%s: in @%s: assert failed: %s", k->layer, at,
                      k->func, k->asserts[code - 1]);
    else if (code == k->nasserts + 1)
        tec_aot_error(err, errlen, "in layer %s%s: in @%s: out of memory", k->layer, at, k->func);
    else if (code == k->nasserts + 2)
        tec_aot_error(err, errlen, "in layer %s%s: in @%s: integer division by zero", k->layer,
                      at, k->func);
    else if (code == k->nasserts + 3)
        tec_aot_error(err, errlen, "in layer %s%s: in @%s: cast of a float to an integer type "
                      "is out of range", k->layer, at, k->func);
    else
        tec_aot_error(err, errlen, "in layer %s%s: in @%s: internal error: the kernel returned "
                      "unknown status %d", k->layer, at, k->func, (int)code);
}

static tec_aot_instance *tec_aot_create(const tec_aot_net *net, const char *weights_dir,
                                        char *err, size_t errlen)
{
    tec_aot_instance *in = calloc(1, sizeof *in);
    if (!in || !(in->b = calloc((size_t)net->nbufs + 1, sizeof *in->b)) ||
        !(in->owned = calloc((size_t)net->nbufs + 1, sizeof *in->owned)) ||
        !(in->arena = tec_aot_alloc(net->arena_bytes))) {
        tec_aot_error(err, errlen, "%s: out of memory", net->name);
        if (in)
            in->net = net;
        tec_aot_free(in);
        return NULL;
    }
    in->net = net;
    for (int i = 0; i < net->nbufs; i++) {
        const tec_aot_buf *p = &net->bufs[i];
        if (p->role == TEC_AOT_INPUT || p->role == TEC_AOT_OUTPUT)
            continue;   /* the caller's, at each run */
        if (p->role == TEC_AOT_PARAM && !weights_dir) {
            in->b[i] = (void *)(net->weights + p->weights_offset);
            continue;
        }
        if (p->role == TEC_AOT_TEMP && p->arena_offset >= 0) {
            in->b[i] = (char *)in->arena + p->arena_offset;
            continue;
        }
        in->b[i] = p->role == TEC_AOT_PARAM ? tec_aot_read_npy(weights_dir, p, err, errlen)
                                            : tec_aot_alloc(p->nbytes);
        if (!in->b[i]) {
            if (p->role != TEC_AOT_PARAM)
                tec_aot_error(err, errlen, "%s: out of memory for buffer %s (%zu bytes)",
                              net->name, p->name, p->nbytes);
            tec_aot_free(in);
            return NULL;
        }
        in->owned[i] = true;
    }
    /* The load calls make the consts (packed weights) once; a param they
     * alone read has done its work then. */
    for (int l = 0; l < net->nloads; l++) {
        const tec_aot_kernel *k = NULL;
        int32_t code = net->run_call(true, l, in->b, &k);
        if (code) {
            tec_aot_call_error(k, true, code, err, errlen);
            tec_aot_free(in);
            return NULL;
        }
    }
    for (int i = 0; i < net->nbufs; i++)
        if (net->bufs[i].load_only && in->owned[i]) {
            free(in->b[i]);
            in->b[i] = NULL;
            in->owned[i] = false;
        }
    return in;
}

static int tec_aot_run(tec_aot_instance *in, const void *const *inputs, void *const *outputs,
                       char *err, size_t errlen)
{
    const tec_aot_net *net = in->net;
    for (int i = 0; i < net->ninputs; i++)
        in->b[net->inputs[i]] = (void *)inputs[i];
    /* A run in tec starts from zeroed outputs; so does this one. */
    for (int i = 0; i < net->noutputs; i++) {
        in->b[net->outputs[i]] = outputs[i];
        memset(outputs[i], 0, net->bufs[net->outputs[i]].nbytes);
    }
    for (int c = 0; c < net->ncalls; c++) {
        const tec_aot_kernel *k = NULL;
        int32_t code = net->run_call(false, c, in->b, &k);
        if (code) {
            tec_aot_call_error(k, false, code, err, errlen);
            return 1;
        }
    }
    return 0;
}
