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

/* Which timed units get a label on the roofline: the slowest first, at
 * most ROOF_LABELS of them, each only where its text does not cover a
 * label already placed.  The chart is 1280x720 with the x axis over
 * [0.01, 1000] FLOP/B and gnuplot's log autoscale of y to whole decades;
 * positions are estimated in pixels of the plot area (about 1100 x 560),
 * a label centered one line above its point, 5.5 pixels per character of
 * the 8-point font and 14 pixels high. */
#define ROOF_LABELS 15

typedef struct roof_box {
    double x0, x1, y0, y1;
} roof_box;

typedef struct by_time {
    double time_us;
    int i;
} by_time;

static int by_time_desc(const void *a, const void *b)
{
    const by_time *x = a, *y = b;
    return x->time_us < y->time_us ? 1 : x->time_us > y->time_us ? -1 : x->i - y->i;
}

static bool roof_plotted(const rt_row *r)
{
    return r->intensity > 0 && r->gflops > 0 && isfinite(r->intensity) && isfinite(r->gflops);
}

static void roofline_labels(const rt_row *const *units, int n, double peak_gflops, bool *label)
{
    double ylo = INFINITY, yhi = peak_gflops > 0 ? peak_gflops : 0;
    for (int i = 0; i < n; i++) {
        label[i] = false;
        if (roof_plotted(units[i])) {
            ylo = fmin(ylo, units[i]->gflops);
            yhi = fmax(yhi, units[i]->gflops);
        }
    }
    if (!(ylo < INFINITY) || yhi <= 0)
        return;
    double d0 = floor(log10(ylo)), d1 = ceil(log10(yhi));
    if (d1 <= d0)
        d1 = d0 + 1;
    by_time *order = malloc(sizeof *order * (size_t)(n + 1));
    roof_box *placed = malloc(sizeof *placed * (ROOF_LABELS + 1));
    if (!order || !placed) {
        free(order);
        free(placed);
        return;
    }
    for (int i = 0; i < n; i++)
        order[i] = (by_time){units[i]->time_us, i};
    qsort(order, (size_t)n, sizeof *order, by_time_desc);
    int np = 0;
    for (int k = 0; k < n && np < ROOF_LABELS; k++) {
        const rt_row *r = units[order[k].i];
        if (!roof_plotted(r) || !r->name)
            continue;
        double px = (log10(r->intensity) + 2) / 5 * 1100, py = (log10(r->gflops) - d0) / (d1 - d0) * 560;
        double w = 5.5 * (double)strlen(r->name);
        roof_box b = {px - w / 2, px + w / 2, py + 7, py + 21};
        bool clash = false;
        for (int j = 0; j < np && !clash; j++)
            clash = b.x0 < placed[j].x1 && placed[j].x0 < b.x1 && b.y0 < placed[j].y1 &&
                    placed[j].y0 < b.y1;
        if (clash)
            continue;
        placed[np++] = b;
        label[order[k].i] = true;
    }
    free(order);
    free(placed);
}

/* units.dat: one line per timed unit (a layer, or a fused group).
 * Columns: index, name, time (us), intensity (FLOP/B), GFLOP/s, and the
 * roofline's label ("" for a unit left unlabeled, roofline_labels). */
static bool write_units(const char *path, const rt_rows *rows, double peak_gflops, int *n,
                        diag *d)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        diag_error(d, diag_noloc(), "cannot write %s: %s", path, strerror(errno));
        return false;
    }
    const rt_row **units = malloc(sizeof *units * (size_t)(rows->n + 1));
    bool *label = malloc(sizeof *label * (size_t)(rows->n + 1));
    if (!units || !label) {
        free(units);
        free(label);
        fclose(f);
        diag_error(d, diag_noloc(), "out of memory");
        return false;
    }
    int nu = 0;
    for (int i = 0; i < rows->n; i++) {
        const rt_row *r = &rows->rows[i];
        if (r->kind == RT_ROW_GROUP || (r->kind == RT_ROW_LAYER && !r->group))
            units[nu++] = r;
    }
    roofline_labels(units, nu, peak_gflops, label);
    fputs("# index\tname\ttime_us\tintensity\tgflops\tlabel\n", f);
    *n = 0;
    for (int i = 0; i < nu; i++) {
        const rt_row *r = units[i];
        fprintf(f, "%d\t", (*n)++);
        rt_gp_datum(f, r->name);
        dat_num(f, r->time_us);
        dat_num(f, r->intensity > 0 ? r->intensity : NAN);
        dat_num(f, r->gflops > 0 ? r->gflops : NAN);
        fputc('\t', f);
        rt_gp_datum(f, label[i] ? r->name : "");
        fputc('\n', f);
    }
    free(units);
    free(label);
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
        /* labels: the slowest layers whose names do not collide (column 6) */
        fputs(" using 4:5 title 'layers' with points pt 7 ps 1.2 lc rgb '#4472c4', '' using "
              "4:5:6 title 'names: the slowest layers, where they fit' with labels offset 0,1 "
              "font ',8'\n  unset output\n}\n", f);
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
    ok = ok && write_layers(layers, rows, &nl, d) &&
         write_units(units, rows, p->have_calib ? p->calib.peak_gflops[0] : 0, &nu, d);
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
