/* runtime/plot.c — the profile's charts, drawn by gnuplot: per-layer bars
 * (MACs, parameter and activation memory, DRAM reads, DRAM writes, time)
 * and the roofline, each as PNG and SVG in one directory.
 *
 * tec writes the data (layers.dat, units.dat) and the script (profile.gp)
 * into the directory and runs `gnuplot profile.gp` from an argv array,
 * never through a shell.  $GNUPLOT names another gnuplot program.
 */
#include "runtime/profile.h"

#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static bool make_dir(const char *dir, diag *d)
{
    struct stat st;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        diag_error(d, diag_noloc(), "--plot %s: %s", dir, strerror(errno));
        return false;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        diag_error(d, diag_noloc(), "--plot %s: not a directory", dir);
        return false;
    }
    return true;
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

void rt_gp_quote(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\'')
            fputc('\'', f);
        fputc(c < 0x20 || c == 0x7f ? ' ' : c, f);
    }
    fputc('\'', f);
}

void rt_gp_datum(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        fputc(c == '"' || c < 0x20 || c == 0x7f ? '_' : c, f);
    }
    fputc('"', f);
}

static void dat_num(FILE *f, double v)
{
    if (isnan(v) || isinf(v))
        fputs("\t?", f);
    else
        fprintf(f, "\t%.9g", v);
}

/* layers.dat: one line per layer (fused members included), for the bars of
 * per-layer quantities.  Columns: index, name, MACs, parameter bytes,
 * activation bytes, DRAM reads, DRAM writes. */
static bool write_layers(const char *path, const rt_rows *rows, int *n, diag *d)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        diag_error(d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    fputs("# index\tname\tmacs\tparam_bytes\tactivation_bytes\tdram_read_bytes\tdram_write_bytes\n", f);
    *n = 0;
    for (int i = 0; i < rows->n; i++) {
        const rt_row *r = &rows->rows[i];
        if (r->kind != RT_ROW_LAYER)
            continue;
        fprintf(f, "%d\t", (*n)++);
        rt_gp_datum(f, r->name);
        dat_num(f, (double)r->macs);
        dat_num(f, (double)r->param_bytes);
        dat_num(f, (double)r->act_bytes);
        dat_num(f, (double)r->dram_read);
        dat_num(f, (double)r->dram_write);
        fputc('\n', f);
    }
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    if (!ok)
        diag_error(d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
    return ok;
}

/* units.dat: one line per timed unit (a layer, or a fused group).
 * Columns: index, name, time (us), intensity (FLOP/B), GFLOP/s. */
static bool write_units(const char *path, const rt_rows *rows, int *n, diag *d)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        diag_error(d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    fputs("# index\tname\ttime_us\tintensity\tgflops\n", f);
    *n = 0;
    for (int i = 0; i < rows->n; i++) {
        const rt_row *r = &rows->rows[i];
        if (!(r->kind == RT_ROW_GROUP || (r->kind == RT_ROW_LAYER && !r->group)))
            continue;
        fprintf(f, "%d\t", (*n)++);
        rt_gp_datum(f, r->name);
        dat_num(f, r->time_us);
        dat_num(f, r->intensity > 0 ? r->intensity : NAN);
        dat_num(f, r->gflops > 0 ? r->gflops : NAN);
        fputc('\n', f);
    }
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    if (!ok)
        diag_error(d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
    return ok;
}

/* One bar chart, as PNG then SVG. */
static void bar_chart(FILE *f, const char *dir, const char *file, const char *title,
                      const char *ylabel, const char *data, const char *plot)
{
    fprintf(f, "do for [k = 1:2] {\n"
               "  if (k == 1) { set terminal @png_term } else { set terminal @svg_term }\n"
               "  set output ");
    rt_gp_quote(f, dir);
    fprintf(f, ".'/%s.'.(k == 1 ? 'png' : 'svg')\n", file);
    fputs("  set title ", f);
    rt_gp_quote(f, title);
    fputs("\n  set ylabel ", f);
    rt_gp_quote(f, ylabel);
    fputs("\n  plot ", f);
    rt_gp_quote(f, data);
    fprintf(f, " %s\n  unset output\n}\n", plot);
}

static bool write_script(const char *path, const char *dir, const rt_profile *p, int nlayers,
                         int nunits, diag *d)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        diag_error(d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    const char *net = p->m->name && *p->m->name ? p->m->name : "network";
    char *layers = join(dir, "layers.dat"), *units = join(dir, "units.dat");
    if (!layers || !units) {
        free(layers);
        free(units);
        fclose(f);
        diag_error(d, diag_noloc(), "out of memory");
        return false;
    }
    fputs("# Generated by tec --plot; run with: gnuplot profile.gp\n"
          "png_term = (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) ? "
          "'pngcairo size 1280,720 noenhanced font \",10\"' : 'png size 1280,720'\n"
          "svg_term = 'svg size 1280,720 noenhanced font \",10\"'\n"
          "set datafile separator '\\t'\n"
          "set datafile missing '?'\n"
          "set style data histograms\n"
          "set style histogram clustered gap 1\n"
          "set style fill solid 0.85 border -1\n"
          "set boxwidth 0.9\n"
          "set xtics rotate by -60 left noenhanced nomirror\n"
          "set key noenhanced top right\n"
          "set grid ytics\n"
          "set format y '%.3s%c'\n"
          "set bmargin 10\n", f);
    char title[512];
    if (nlayers > 0) {
        snprintf(title, sizeof title, "MACs per layer (%s)", net);
        bar_chart(f, dir, "macs", title, "MACs", layers, "using 3:xtic(2) title 'MACs' lc rgb '#4472c4'");
        snprintf(title, sizeof title, "Parameter and activation memory per layer (%s)", net);
        bar_chart(f, dir, "memory", title, "bytes", layers,
                  "using 4:xtic(2) title 'parameters' lc rgb '#ed7d31', '' using 5 title "
                  "'activations (outputs)' lc rgb '#70ad47'");
        snprintf(title, sizeof title, "Estimated DRAM reads per layer (%s)", net);
        bar_chart(f, dir, "dram_reads", title, "bytes", layers,
                  "using 6:xtic(2) title 'DRAM reads' lc rgb '#5b9bd5'");
        snprintf(title, sizeof title, "Estimated DRAM writes per layer (%s)", net);
        bar_chart(f, dir, "dram_writes", title, "bytes", layers,
                  "using 7:xtic(2) title 'DRAM writes' lc rgb '#a5a5a5'");
    }
    if (nunits > 0) {
        snprintf(title, sizeof title, "Time per layer (%s, median of %d runs)", net, p->nruns);
        bar_chart(f, dir, "time", title, "microseconds", units,
                  "using 3:xtic(2) title 'time (us)' lc rgb '#ffc000'");
    }
    if (p->have_calib && nunits > 0) {
        double peak = p->calib.peak_gflops[0], bw = p->calib.bw_gbs[0];
        fprintf(f, "peak = %.6g\nbw = %.6g\nroof(x) = (x * bw < peak) ? x * bw : peak\n", peak, bw);
        fputs("set style data points\n"
              "set logscale xy\n"
              "set xtics auto norotate\n"
              "set bmargin 4\n"
              "set format y '%g'\n"
              "set xlabel 'arithmetic intensity (FLOP per DRAM byte, estimated)'\n"
              "set xrange [0.01:1000]\n"
              "set samples 400\n", f);
        snprintf(title, sizeof title, "Roofline (%s): %.1f GFLOP/s peak, %.1f GB/s, 1 thread",
                 net, peak, bw);
        fprintf(f, "do for [k = 1:2] {\n"
                   "  if (k == 1) { set terminal @png_term } else { set terminal @svg_term }\n"
                   "  set output ");
        rt_gp_quote(f, dir);
        fputs(".'/roofline.'.(k == 1 ? 'png' : 'svg')\n  set title ", f);
        rt_gp_quote(f, title);
        fputs("\n  set ylabel 'GFLOP/s'\n  plot roof(x) title 'roof' with lines lw 2 lc rgb "
              "'#c00000', ", f);
        rt_gp_quote(f, units);
        fputs(" using 4:5 title 'layers' with points pt 7 ps 1.2 lc rgb '#4472c4', '' using "
              "4:5:2 notitle with labels offset 0,1 font ',8'\n  unset output\n}\n", f);
    }
    free(layers);
    free(units);
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    if (!ok)
        diag_error(d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
    return ok;
}

bool rt_spawn_wait(const char *option, char *const *argv, const char *hint, diag *d)
{
    const char *prog = argv[0];
    pid_t pid;
    int rc = posix_spawnp(&pid, prog, NULL, NULL, argv, environ);
    if (rc != 0) {
        diag_error(d, diag_noloc(), "%s: cannot run %s: %s (%s)", option, prog, strerror(rc),
                   hint);
        return false;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            diag_error(d, diag_noloc(), "%s: waiting for %s: %s", option, prog, strerror(errno));
            return false;
        }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        diag_error(d, diag_noloc(), "%s: %s failed (exit status %d)", option, prog,
                   WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return false;
    }
    return true;
}

/* Runs gnuplot on the script; its messages go to our stderr. */
static bool run_gnuplot(const char *script, diag *d)
{
    const char *prog = getenv("GNUPLOT");
    char *argv[] = {(char *)(prog && *prog ? prog : "gnuplot"), (char *)script, NULL};
    return rt_spawn_wait("--plot", argv, "install gnuplot, or set GNUPLOT", d);
}

bool rt_plot(const rt_profile *p, const rt_rows *rows, const char *dir, diag *d)
{
    if (!make_dir(dir, d))
        return false;
    char *layers = join(dir, "layers.dat"), *units = join(dir, "units.dat"),
         *script = join(dir, "profile.gp");
    int nl = 0, nu = 0;
    bool ok = layers && units && script;
    if (!ok)
        diag_error(d, diag_noloc(), "out of memory");
    ok = ok && write_layers(layers, rows, &nl, d) && write_units(units, rows, &nu, d);
    if (p->nruns == 0)   /* --no-run: nothing timed, no time or roofline chart */
        nu = 0;
    ok = ok && write_script(script, dir, p, nl, nu, d) && run_gnuplot(script, d);
    static const char *const charts[] = {"macs", "memory", "dram_reads", "dram_writes", "time",
                                         "roofline"};
    for (int i = 0; ok && i < 6; i++) {
        if ((i < 4 && nl == 0) || (i >= 4 && nu == 0) || (i == 5 && !p->have_calib))
            continue;
        for (int k = 0; ok && k < 2; k++) {
            char name[64];
            snprintf(name, sizeof name, "%s.%s", charts[i], k ? "svg" : "png");
            char *path = join(dir, name);
            struct stat st;
            if (!path || stat(path, &st) != 0 || st.st_size == 0) {
                diag_error(d, diag_noloc(), "--plot: gnuplot did not write %s",
                           path ? path : name);
                ok = false;
            }
            free(path);
        }
    }
    free(layers);
    free(units);
    free(script);
    return ok;
}
