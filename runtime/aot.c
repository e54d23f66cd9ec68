/* runtime/aot.c — writes a compiled network as a C library of its own.
 *
 * The library is built like tec's own kernels (codegen/compile.c, the same
 * flags and target): the kernels one translation unit per distinct kernel,
 * from and into the kernel cache (cg_compile_library), and one unit of the
 * library's own:
 *
 *   the kernels' declarations (codegen/split.h's prelude and prototypes)
 *   runtime/aot_runtime.c, as text (create, run, free over the tables)
 *   the network's tables: its buffers, inputs, outputs, calls and kernels
 *   the embedded parameters (an .incbin of a file written here)
 *   the public functions NAME_create, NAME_run ... (the only exports)
 *
 * linked so that only the public functions are global symbols.  Kernels
 * that split.h cannot cut make one translation unit with the rest instead
 * (cg_emit_c_static: every symbol static).  NAME.h declares the public
 * functions with the inputs' and outputs' dtypes and shapes.  Nothing of tec is needed at run time: the library
 * links libgomp (parallel loops), libmvec and libm. */
#include "config.h"

#include "runtime/aot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen/split.h"
#include "runtime/npy.h"

/* The runtime's source text (runtime/aot_runtime.c, made a string literal
 * at build time). */
static const char aot_runtime_text[] =
#include "runtime/aot_runtime.inc"
    ;

/* Roles the runtime knows (aot_runtime.c's TEC_AOT_*), or -1. */
static int aot_role(ir_buf_role r)
{
    switch (r) {
    case IR_BUF_INPUT: return 0;
    case IR_BUF_PARAM: return 1;
    case IR_BUF_OUTPUT: return 2;
    case IR_BUF_TEMP: return 3;
    case IR_BUF_CONST: return 4;
    default: return -1;
    }
}

/* s as a C string literal. */
static void put_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20 || *c >= 0x7f)
            fprintf(out, "\\%03o", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

char *rt_aot_library_name(const char *path, char *why, size_t whylen)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    size_t ext = n > 3 && strcmp(base + n - 3, ".so") == 0 ? 3
                 : n > 2 && strcmp(base + n - 2, ".a") == 0 ? 2 : 0;
    if (!ext) {
        snprintf(why, whylen, "--emit=lib -o %s: the library's name must end in .so (a shared "
                 "library) or .a (a static one)", path);
        return NULL;
    }
    if (n - ext > 3 && strncmp(base, "lib", 3) == 0) {
        base += 3;
        n -= 3;
    }
    char *name = strndup(base, n - ext);
    bool ok = name && *name && !(*name >= '0' && *name <= '9');
    for (const char *c = name; ok && *c; c++)
        ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
             (*c >= '0' && *c <= '9') || *c == '_';
    if (!ok) {
        snprintf(why, whylen, "--emit=lib -o %s: '%s' is not a C identifier, and the library's "
                 "functions are named after it (NAME_create, NAME_run ...): name the file "
                 "libNAME.so or libNAME.a", path, name ? name : "");
        free(name);
        return NULL;
    }
    return name;
}

static const rt_iface_buf *iface_buf(const rt_iface *f, const char *name)
{
    for (int i = 0; i < f->nbufs; i++)
        if (strcmp(f->bufs[i].name, name) == 0)
            return &f->bufs[i];
    return NULL;
}

static bool passes(const ir_graph_call *c, const ir_buffer *b)
{
    for (int a = 0; a < c->nargs; a++)
        if (c->args[a] == b)
            return true;
    return false;
}

/* A parameter that load calls read and no call does: the instance frees
 * its own copy once the load calls have made the packed weights. */
static bool load_only(const ir_graph *g, const ir_buffer *b)
{
    bool loaded = false;
    for (int l = 0; l < g->nloads; l++)
        loaded |= passes(&g->loads[l], b);
    for (int c = 0; c < g->ncalls; c++)
        if (passes(&g->calls[c], b))
            return false;
    return loaded;
}

/* The interface of the library: its inputs, then its outputs, in graph
 * order, with their declared shapes. */
typedef struct aot_port {
    int buf;                    /* graph buffer index */
    const rt_iface_buf *decl;
    char *cname;                /* the parameter's name in NAME_run */
} aot_port;

typedef struct aot_ports {
    aot_port *p;
    int n, ninputs;
} aot_ports;

/* in_NAME / out_NAME with every character that is not a letter, digit or
 * '_' made '_', and the port's number appended when two would be equal. */
static bool name_ports(aot_ports *ps)
{
    for (int i = 0; i < ps->n; i++) {
        const char *s = ps->p[i].decl->name;
        size_t n = strlen(s);
        char *c = malloc(n + 32);
        if (!c)
            return false;
        int k = sprintf(c, "%s_", i < ps->ninputs ? "in" : "out");
        for (size_t j = 0; j < n; j++) {
            char ch = s[j];
            bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                      (ch >= '0' && ch <= '9') || ch == '_';
            c[k++] = ok ? ch : '_';
        }
        c[k] = '\0';
        for (int j = 0; j < i; j++)
            if (strcmp(ps->p[j].cname, c) == 0) {
                sprintf(c + k, "_%d", i);
                break;
            }
        ps->p[i].cname = c;
    }
    return true;
}

static bool collect_ports(const ir_module *m, const rt_iface *iface, aot_ports *ps, diag *d)
{
    const ir_graph *g = &m->graph;
    ps->p = calloc((size_t)g->nbufs + 1, sizeof *ps->p);
    if (!ps->p) {
        diag_error(d, diag_noloc(), "out of memory");
        return false;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < g->nbufs; i++) {
            if (g->bufs[i]->role != (pass == 0 ? IR_BUF_INPUT : IR_BUF_OUTPUT))
                continue;
            const rt_iface_buf *f = iface_buf(iface, g->bufs[i]->name);
            if (!f) {
                diag_internal(d, "aot", "buffer %s has no declared shape", g->bufs[i]->name);
                return false;
            }
            ps->p[ps->n++] = (aot_port){i, f, NULL};
        }
        if (pass == 0)
            ps->ninputs = ps->n;
    }
    if (!name_ports(ps)) {
        diag_error(d, diag_noloc(), "out of memory");
        return false;
    }
    return true;
}

static void free_ports(aot_ports *ps)
{
    for (int i = 0; ps->p && i < ps->n; i++)
        free(ps->p[i].cname);
    free(ps->p);
}

/* "f32[1, 3, 224, 224]" */
static void put_type(FILE *out, const rt_iface_buf *f)
{
    fprintf(out, "%s[", ir_dtype_name(f->dtype));
    for (int k = 0; k < f->ndim; k++)
        fprintf(out, "%s%lld", k ? ", " : "", (long long)f->shape[k]);
    fputc(']', out);
}

/* ---------------------------------------------------------------- the weights */

/* Writes every parameter's bytes to a new file beside the library (64-byte
 * aligned, in graph order) and its offset to offsets[i]; returns the
 * file's path (malloc'ed), or NULL after a diagnostic. */
static char *write_weights(const ir_module *m, const rt_iface *iface, const char *dir,
                           const char *weights_dir, int64_t *offsets, diag *d)
{
    size_t n = strlen(dir) + 32;
    char *path = malloc(n);
    if (!path) {
        diag_error(d, diag_noloc(), "out of memory");
        return NULL;
    }
    snprintf(path, n, "%s/.tec-weights-XXXXXX", dir);
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        diag_error(d, diag_noloc(), "cannot create a temporary file in %s: %s", dir,
                   strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(path);
        }
        free(path);
        return NULL;
    }
    rt_run_options ro = {.weights_dir = weights_dir};
    int64_t at = 0;
    bool ok = true;
    for (int i = 0; ok && i < m->graph.nbufs; i++) {
        offsets[i] = -1;
        if (m->graph.bufs[i]->role != IR_BUF_PARAM)
            continue;
        rt_tensor *t = rt_buffer_tensor(m, iface, &ro, i, d);
        if (!t) {
            ok = false;
            break;
        }
        static const char zeros[64];
        int64_t pad = (64 - at % 64) % 64;
        offsets[i] = at + pad;
        ok = fwrite(zeros, 1, (size_t)pad, f) == (size_t)pad &&
             fwrite(t->data, 1, t->nbytes, f) == t->nbytes;
        at += pad + (int64_t)t->nbytes;
        rt_tensor_free(t);
        if (!ok)
            diag_error(d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
    }
    if (fclose(f) != 0 && ok) {
        diag_error(d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
        ok = false;
    }
    if (!ok) {
        unlink(path);
        free(path);
        return NULL;
    }
    return path;
}

/* The asm statement that embeds the file `path` as tec_aot_weights (a
 * symbol local to the library); the path is quoted for the assembler and
 * then for C. */
static void put_incbin(FILE *out, const char *path)
{
    fputs("/* The parameters, embedded. */\n"
          "__asm__(\".section .rodata\\n\"\n"
          "        \".balign 64\\n\"\n"
          "        \"tec_aot_weights:\\n\"\n"
          "        \".incbin \\\"", out);
    for (const char *c = path; *c; c++) {
        if (*c == '"' || *c == '\\')
            fputs(*c == '"' ? "\\\\\\\"" : "\\\\\\\\", out);
        else
            fputc(*c, out);
    }
    fputs("\\\"\\n\"\n"
          "        \".previous\\n\");\n"
          "extern const unsigned char tec_aot_weights[] __asm__(\"tec_aot_weights\")\n"
          "    __attribute__((visibility(\"hidden\")));\n\n", out);
}

/* ---------------------------------------------------------------- the source */

static int func_index(const ir_module *m, const ir_func *f)
{
    for (int k = 0; k < m->nfuncs; k++)
        if (m->funcs[k] == f)
            return k;
    return -1;
}

/* The kernels' failure tables: one tec_aot_kernel per function. */
static void put_kernels(FILE *out, const ir_module *m)
{
    for (int k = 0; k < m->nfuncs; k++) {
        int n = cg_assert_count(m->funcs[k]);
        if (!n)
            continue;
        fprintf(out, "static const char *const tec_aot_asserts_%d[] = {", k);
        for (int a = 1; a <= n; a++) {
            fputs(a > 1 ? ", " : "", out);
            put_string(out, cg_assert_message(m->funcs[k], a));
        }
        fputs("};\n", out);
    }
    fputs("static const tec_aot_kernel tec_aot_kernels[] = {\n", out);
    for (int k = 0; k < m->nfuncs; k++) {
        const ir_func *f = m->funcs[k];
        const char *layer = ir_func_attr(f, "layer");
        fputs("    {", out);
        put_string(out, f->name);
        fputs(", ", out);
        put_string(out, layer ? layer : f->name);
        int n = cg_assert_count(f);
        if (n)
            fprintf(out, ", %d, tec_aot_asserts_%d},\n", n, k);
        else
            fputs(", 0, NULL},\n", out);
    }
    fputs("};\n\n", out);
}

/* One switch case per call: the kernel on its graph buffers. */
static bool put_calls(FILE *out, const ir_module *m, bool load, diag *d)
{
    const ir_graph *g = &m->graph;
    int n = load ? g->nloads : g->ncalls;
    const ir_graph_call *calls = load ? g->loads : g->calls;
    fprintf(out, "    %sswitch (c) {\n", load ? "if (load)\n        " : "");
    for (int c = 0; c < n; c++) {
        int k = func_index(m, calls[c].fn);
        char *sym = k >= 0 ? cg_symbol_name(m, k) : NULL;
        if (!sym) {
            diag_internal(d, "aot", "%s %d calls a function that is not in the module",
                          load ? "load call" : "call", c);
            return false;
        }
        fprintf(out, "    case %d:\n        *kernel = &tec_aot_kernels[%d];\n        return %s(",
                c, k, sym);
        for (int a = 0; a < calls[c].nargs; a++) {
            int b = ir_graph_buffer_index(g, calls[c].args[a]);
            if (b < 0) {
                diag_internal(d, "aot", "call %d of @%s passes a buffer not in the graph", c,
                              calls[c].fn->name);
                free(sym);
                return false;
            }
            fprintf(out, "%sb[%d]", a ? ", " : "", b);
        }
        fputs(");\n", out);
        free(sym);
    }
    fputs("    }\n", out);
    return true;
}

static bool put_tables(FILE *out, const ir_module *m, const rt_iface *iface,
                       const aot_ports *ps, const int64_t *offsets, bool weights, bool threads,
                       const char *name, diag *d)
{
    const ir_graph *g = &m->graph;
    put_kernels(out, m);
    fputs("static const tec_aot_buf tec_aot_bufs[] = {\n", out);
    for (int i = 0; i < g->nbufs; i++) {
        const ir_buffer *b = g->bufs[i];
        int role = aot_role(b->role);
        const rt_iface_buf *f = iface_buf(iface, b->name);
        if (role < 0 || (b->role == IR_BUF_PARAM && !f)) {
            diag_internal(d, "aot", "graph buffer %s has no place in a library", b->name);
            return false;
        }
        fputs("    {", out);
        put_string(out, b->name);
        fprintf(out, ", %d, %lld, %lld, %lld, %s, ", role, (long long)ir_buffer_bytes(b),
                (long long)(b->in_arena ? b->arena_offset : -1), (long long)offsets[i],
                b->role == IR_BUF_PARAM && load_only(g, b) ? "true" : "false");
        if (b->role == IR_BUF_PARAM) {
            char dict[512];
            rt_npy_header_dict(dict, sizeof dict, rt_npy_descr(f->dtype), f->ndim, f->shape);
            put_string(out, dict);
        } else {
            fputs("NULL", out);
        }
        fputs("},\n", out);
    }
    fputs("};\n", out);
    for (int io = 0; io < 2; io++) {
        fprintf(out, "static const int tec_aot_%s[] = {", io ? "outputs" : "inputs");
        int lo = io ? ps->ninputs : 0, hi = io ? ps->n : ps->ninputs;
        for (int i = lo; i < hi; i++)
            fprintf(out, "%s%d", i > lo ? ", " : "", ps->p[i].buf);
        fputs(hi > lo ? "};\n" : "-1};\n", out);
    }
    fputs("\nstatic int32_t tec_aot_run_call(bool load, int c, void *const *b,\n"
          "                                const tec_aot_kernel **kernel)\n{\n", out);
    if (!put_calls(out, m, true, d))
        return false;
    fputs("    else\n", out);
    if (!put_calls(out, m, false, d))
        return false;
    fputs("    *kernel = &tec_aot_kernels[0];\n"
          "    return -1;   /* (never: c is below nloads or ncalls) */\n}\n\n", out);
    fputs("static const tec_aot_net tec_aot_net_table = {\n    ", out);
    put_string(out, name);
    fprintf(out, ", %d, tec_aot_bufs, %d, %d, tec_aot_inputs, tec_aot_outputs, %d, %d,\n"
            "    tec_aot_run_call, %lld, %s, %s,\n};\n\n",
            g->nbufs, ps->ninputs, ps->n - ps->ninputs, g->nloads, g->ncalls,
            (long long)(g->has_arena ? g->arena_bytes : 0), weights ? "tec_aot_weights" : "NULL",
            threads ? "&tec_num_threads" : "NULL");
    return true;
}

/* The tensor descriptions NAME_input and NAME_output return. */
static void put_tensor_infos(FILE *out, const aot_ports *ps)
{
    for (int i = 0; i < ps->n; i++) {
        const rt_iface_buf *f = ps->p[i].decl;
        fprintf(out, "static const int64_t tec_aot_shape_%d[] = {", i);
        for (int k = 0; k < f->ndim; k++)
            fprintf(out, "%s%lld", k ? ", " : "", (long long)f->shape[k]);
        fputs(f->ndim ? "};\n" : "0};\n", out);
    }
    fputs("static const tec_aot_tensor tec_aot_ports[] = {\n", out);
    for (int i = 0; i < ps->n; i++) {
        const rt_iface_buf *f = ps->p[i].decl;
        int64_t numel = 1;
        for (int k = 0; k < f->ndim; k++)
            numel *= f->shape[k];
        fputs("    {", out);
        put_string(out, f->name);
        fprintf(out, ", \"%s\", %d, tec_aot_shape_%d, %lld, %lld},\n", ir_dtype_name(f->dtype),
                f->ndim, i, (long long)numel, (long long)numel * ir_dtype_size(f->dtype));
    }
    if (!ps->n)
        fputs("    {0},\n", out);
    fputs("};\n\n", out);
}

/* NAME_run's prototype, the same in the header and the source. */
static void put_run_prototype(FILE *out, const char *name, const aot_ports *ps)
{
    fprintf(out, "int %s_run(%s *net", name, name);
    for (int i = 0; i < ps->n; i++) {
        const rt_iface_buf *f = ps->p[i].decl;
        fprintf(out, ",\n        %s%s *%s", i < ps->ninputs ? "const " : "",
                ir_dtype_ctype(f->dtype), ps->p[i].cname);
    }
    fputs(",\n        char *err, size_t errlen)", out);
}

static void put_api(FILE *out, const char *name, const aot_ports *ps, bool threads)
{
    const char *n = name;
    if (threads)
        fprintf(out, "__attribute__((constructor)) static void tec_aot_init(void)\n{\n"
                     "    tec_num_threads = tec_aot_default_threads();\n}\n\n");
    fprintf(out,
        "%s *%s_create(const char *weights_dir, char *err, size_t errlen)\n{\n"
        "    return (%s *)tec_aot_create(&tec_aot_net_table, weights_dir, err, errlen);\n}\n\n"
        "int %s_run_buffers(%s *net, const void *const *inputs, void *const *outputs,\n"
        "        char *err, size_t errlen)\n{\n"
        "    return tec_aot_run((tec_aot_instance *)net, inputs, outputs, err, errlen);\n}\n\n",
        n, n, n, n, n);
    put_run_prototype(out, name, ps);
    fputs("\n{\n", out);
    fprintf(out, "    const void *inputs[] = {");
    for (int i = 0; i < ps->ninputs; i++)
        fprintf(out, "%s%s", i ? ", " : "", ps->p[i].cname);
    fprintf(out, "%s};\n    void *outputs[] = {", ps->ninputs ? "" : "NULL");
    for (int i = ps->ninputs; i < ps->n; i++)
        fprintf(out, "%s%s", i > ps->ninputs ? ", " : "", ps->p[i].cname);
    fprintf(out, "%s};\n"
        "    return %s_run_buffers(net, inputs, outputs, err, errlen);\n}\n\n",
        ps->n > ps->ninputs ? "" : "NULL", n);
    fprintf(out,
        "void %s_free(%s *net)\n{\n    tec_aot_free((tec_aot_instance *)net);\n}\n\n"
        "void %s_set_threads(int n)\n{\n", n, n, n);
    if (threads)
        fputs("    tec_num_threads = n < 1 ? 1 : n > 1024 ? 1024 : n;\n", out);
    else
        fputs("    (void)n;   /* the network has no parallel loops */\n", out);
    fprintf(out, "}\n\n"
        "int %s_num_inputs(void) { return %d; }\n"
        "int %s_num_outputs(void) { return %d; }\n\n"
        "const tec_aot_tensor *%s_input(int i)\n{\n"
        "    return i >= 0 && i < %d ? &tec_aot_ports[i] : NULL;\n}\n\n"
        "const tec_aot_tensor *%s_output(int i)\n{\n"
        "    return i >= 0 && i < %d ? &tec_aot_ports[%d + i] : NULL;\n}\n",
        n, ps->ninputs, n, ps->n - ps->ninputs, n, ps->ninputs, n, ps->n - ps->ninputs,
        ps->ninputs);
}

/* ---------------------------------------------------------------- the header */

/* The type of NAME_input's and NAME_output's answers, once for every
 * network's header a program includes. */
static void put_tensor_type(FILE *out)
{
    fputs("#ifndef TEC_AOT_TENSOR_DEFINED\n#define TEC_AOT_TENSOR_DEFINED\n"
          "/* An input or output: its name in the program, dtype (\"f32\", \"f64\",\n"
          " * \"i32\", \"i64\" or \"bool\"), rank, shape, elements and bytes. */\n"
          "typedef struct tec_aot_tensor {\n"
          "    const char *name;\n    const char *dtype;\n    int ndim;\n"
          "    const int64_t *shape;\n    int64_t numel;\n    int64_t nbytes;\n"
          "} tec_aot_tensor;\n#endif\n\n", out);
}

static void put_header(FILE *out, const char *name, const char *source_name,
                       const aot_ports *ps, const char *link)
{
    fprintf(out, "/* %s.h — the network of %s as a C library, generated by tec %s\n"
                 " * (tec --emit=lib; doc/aot.md).  Link with %s.\n *\n",
            name, source_name, PACKAGE_VERSION, link);
    fputs(" * Tensors are dense, row-major arrays of their dtype (f32 float, f64\n"
          " * double, i32 int32_t, i64 int64_t, bool uint8_t), owned by the caller.\n"
          " * An instance may run on one thread at a time; separate instances may\n"
          " * run at the same time.  Functions that fail return NULL or nonzero and\n"
          " * write a message to err (errlen bytes; err may be NULL). */\n", out);
    char guard[300];
    snprintf(guard, sizeof guard, "%s_H", name);
    for (char *c = guard; *c; c++)
        if (*c >= 'a' && *c <= 'z')
            *c = (char)(*c - 'a' + 'A');
    fprintf(out, "#ifndef %s\n#define %s\n\n#include <stddef.h>\n#include <stdint.h>\n\n"
                 "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n", guard, guard);
    put_tensor_type(out);
    const char *n = name;
    fprintf(out, "typedef struct %s %s;\n\n", n, n);
    fprintf(out, "/* A new instance.  Its weights are the ones embedded in the library, or,\n"
                 " * when weights_dir is not NULL, read from weights_dir/PARAM.npy for each\n"
                 " * parameter (files as np.save writes them, of the parameter's dtype and\n"
                 " * shape).  NULL on failure. */\n"
                 "%s *%s_create(const char *weights_dir, char *err, size_t errlen);\n\n",
            n, n);
    fputs("/* Runs the network: reads the inputs, writes the outputs.  0 on success.\n", out);
    for (int i = 0; i < ps->n; i++) {
        fprintf(out, " *   %s %s: ", i < ps->ninputs ? "input " : "output", ps->p[i].cname);
        const rt_iface_buf *f = ps->p[i].decl;
        if (strcmp(f->name, ps->p[i].cname + (i < ps->ninputs ? 3 : 4)) != 0)
            fprintf(out, "\"%s\", ", f->name);
        put_type(out, f);
        fputc('\n', out);
    }
    fputs(" */\n", out);
    put_run_prototype(out, name, ps);
    fputs(";\n\n", out);
    fprintf(out, "/* The same with the inputs and outputs as arrays, in the order of\n"
                 " * %s_input(i) and %s_output(i). */\n"
                 "int %s_run_buffers(%s *net, const void *const *inputs, void *const *outputs,\n"
                 "        char *err, size_t errlen);\n\n"
                 "void %s_free(%s *net);\n\n"
                 "/* Threads of the parallel loops of every instance (1 to 1024; by default\n"
                 " * $TEC_NUM_THREADS, else the processors the process may use).  Not while\n"
                 " * a run is in progress. */\n"
                 "void %s_set_threads(int n);\n\n"
                 "/* The inputs and outputs, as data (NULL for i out of range). */\n"
                 "int %s_num_inputs(void);\n"
                 "const tec_aot_tensor *%s_input(int i);\n"
                 "int %s_num_outputs(void);\n"
                 "const tec_aot_tensor *%s_output(int i);\n\n",
            n, n, n, n, n, n, n, n, n, n, n);
    fprintf(out, "#ifdef __cplusplus\n}\n#endif\n#endif\n");
}

/* ---------------------------------------------------------------- all of it */

/* Writes text to path through a temporary file renamed over it. */
static bool write_file(const char *path, const char *text, size_t len, diag *d)
{
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp) {
        diag_error(d, diag_noloc(), "out of memory");
        return false;
    }
    snprintf(tmp, n, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    bool ok = f && fwrite(text, 1, len, f) == len;
    if (f)
        ok = fclose(f) == 0 && ok;
    else if (fd >= 0)
        close(fd);
    ok = ok && chmod(tmp, 0644) == 0 && rename(tmp, path) == 0;
    if (!ok) {
        diag_error(d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
        if (fd >= 0)
            unlink(tmp);
    }
    free(tmp);
    return ok;
}

bool rt_aot_write(const ir_module *m, const rt_iface *iface, const char *out_path,
                  const char *weights_dir, const char *source_name, const cg_options *co,
                  diag *d)
{
    char why[1024];
    char *name = rt_aot_library_name(out_path, why, sizeof why);
    if (!name) {
        diag_error(d, diag_noloc(), "%s", why);
        return false;
    }
    bool ok = false, shared = out_path[strlen(out_path) - 1] == 'o';
    char *dir = strdup(out_path), *slash = dir ? strrchr(dir, '/') : NULL;
    char *kernels = NULL, *weights = NULL, *src = NULL, *hdr = NULL, *hpath = NULL;
    cg_csplit sp = {0};
    bool split = false;
    size_t src_len = 0, hdr_len = 0;
    int64_t *offsets = calloc((size_t)m->graph.nbufs + 1, sizeof *offsets);
    aot_ports ps = {0};
    if (!dir || !offsets) {
        diag_error(d, diag_noloc(), "out of memory");
        goto out;
    }
    if (slash)
        slash == dir ? (void)(dir[1] = '\0') : (void)(*slash = '\0');
    else
        strcpy(dir, ".");
    if ((weights_dir && !rt_check_weights_dir(iface, weights_dir, d)) ||
        !collect_ports(m, iface, &ps, d) ||
        !(kernels = cg_emit_c(m, co->target, co->unchecked, d)))
        goto out;
    /* Split, the library's unit declares the kernels; else it holds them,
     * static. */
    split = cg_split_c(kernels, &sp) && sp.n >= 1;
    if (!split) {
        cg_split_free(&sp);
        free(kernels);
        if (!(kernels = cg_emit_c_static(m, co->target, co->unchecked, d)))
            goto out;
    }
    bool has_params = false;
    for (int i = 0; i < m->graph.nbufs; i++)
        has_params |= m->graph.bufs[i]->role == IR_BUF_PARAM;
    if (has_params && !(weights = write_weights(m, iface, dir, weights_dir, offsets, d)))
        goto out;
    if (weights && strchr(weights, '\n')) {
        diag_error(d, diag_noloc(), "--emit=lib -o %s: the directory's name holds a newline, "
                   "which the assembler cannot take", out_path);
        goto out;
    }
    /* A module with parallel loops defines their thread count. */
    bool threads = strstr(kernels, split ? "\nint tec_num_threads = 1;"
                                         : "static int tec_num_threads = 1;") != NULL;

    FILE *s = open_memstream(&src, &src_len);
    if (!s) {
        diag_error(d, diag_noloc(), "out of memory");
        goto out;
    }
    fputs("#define _GNU_SOURCE   /* sched_getaffinity: the default thread count */\n", s);
    if (split) {
        fputs(sp.prelude_extern, s);
        fputs("\n/* The kernels, built one by one. */\n", s);
        for (int i = 0; i < sp.n; i++)
            fputs(sp.units[i].proto, s);
    } else {
        fputs(kernels, s);
    }
    fputs("\n/* ---------------------------------------------------------------- runtime */\n\n",
          s);
    fputs(aot_runtime_text, s);
    fputs("\n/* ---------------------------------------------------------------- the network */"
          "\n\n", s);
    if (weights)
        put_incbin(s, weights);
    put_tensor_type(s);
    fprintf(s, "typedef struct %s %s;\n\n", name, name);
    bool tables = put_tables(s, m, iface, &ps, offsets, weights != NULL, threads, name, d);
    put_tensor_infos(s, &ps);
    put_api(s, name, &ps, threads);
    if (fclose(s) != 0 || !tables) {
        if (tables)
            diag_error(d, diag_noloc(), "out of memory");
        goto out;
    }
    if (split) {
        const char *fns[] = {"create", "run_buffers", "run", "free", "set_threads", "num_inputs",
                             "num_outputs", "input", "output"};
        enum { NFNS = sizeof fns / sizeof *fns };
        char *exports[NFNS];
        int nx = 0;
        for (; nx < NFNS; nx++) {
            size_t len = strlen(name) + strlen(fns[nx]) + 2;
            if (!(exports[nx] = malloc(len)))
                break;
            snprintf(exports[nx], len, "%s_%s", name, fns[nx]);
        }
        bool built = nx == NFNS && cg_compile_library(&sp, src, out_path,
                                                      (const char *const *)exports, nx, co, d);
        if (nx < NFNS)
            diag_error(d, diag_noloc(), "out of memory");
        for (int i = 0; i < nx; i++)
            free(exports[i]);
        if (!built)
            goto out;
    } else if (!cg_compile_to(src, out_path, co, d)) {
        goto out;
    }

    FILE *h = open_memstream(&hdr, &hdr_len);
    if (!h) {
        diag_error(d, diag_noloc(), "out of memory");
        goto out;
    }
    char link[300];
    snprintf(link, sizeof link, shared ? "-l%s (a shared library: it brings libgomp, libmvec "
             "and libm)" : "-l%s -fopenmp -lmvec -lm (a static library)", name);
    put_header(h, name, source_name, &ps, link);
    if (fclose(h) != 0) {
        diag_error(d, diag_noloc(), "out of memory");
        goto out;
    }
    size_t hn = strlen(dir) + strlen(name) + 4;
    if (!(hpath = malloc(hn))) {
        diag_error(d, diag_noloc(), "out of memory");
        goto out;
    }
    snprintf(hpath, hn, "%s/%s.h", dir, name);
    ok = write_file(hpath, hdr, hdr_len, d);
out:
    if (weights)
        unlink(weights);
    free_ports(&ps);
    cg_split_free(&sp);
    free(weights);
    free(kernels);
    free(src);
    free(hdr);
    free(hpath);
    free(offsets);
    free(dir);
    free(name);
    return ok;
}
