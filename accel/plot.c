/* accel/plot.c — gnuplot charts of sweeps (see accel/plot.h): data files,
 * a script that draws every chart as PNG and SVG, and running gnuplot
 * without a shell. */
#include "accel/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/profile.h"

extern char **environ;

/* ---------------------------------------------------------------- files */

static FILE *open_w(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "w");
    if (!f)
        snprintf(err, errlen, "tec: error: cannot write %s: %s", path, strerror(errno));
    return f;
}

static bool close_w(FILE *f, const char *path, char *err, size_t errlen)
{
    bool bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, errlen, "tec: error: cannot write %s: %s", path,
                 errno ? strerror(errno) : "write error");
        return false;
    }
    return true;
}

/* DIR/NAME into buf; false (with err) when it does not fit. */
static bool join(char *buf, size_t n, const char *dir, const char *name, char *err,
                 size_t errlen)
{
    if ((size_t)snprintf(buf, n, "%s/%s", dir, name) >= n) {
        snprintf(err, errlen, "tec: error: path too long: %s/%s", dir, name);
        return false;
    }
    return true;
}

/* ---------------------------------------------------------------- data */

/* The three quantities every chart shows, as data columns 3, 4, 5. */
typedef struct metric {
    const char *file;          /* chart name part */
    const char *name;          /* in titles */
    const char *title;         /* axis title */
} metric;

static const metric metrics[3] = {
    {"latency", "latency", "latency (us)"},
    {"energy", "energy", "energy (pJ)"},
    {"edp", "EDP", "EDP (pJ*us)"},
};

static void metric_values(const acc_result *r, double v[3])
{
    v[0] = r->latency_us;
    v[1] = r->energy_pj;
    v[2] = r->edp;
}

static bool write_configs_dat(const char *path, const acc_plot_input *in, char *err,
                              size_t errlen)
{
    FILE *f = open_w(path, err, errlen);
    if (!f)
        return false;
    fputs("# tec accelerator sweep: network totals per configuration\n"
          "# config label latency_us energy_pj edp_pj_us\n", f);
    for (int c = 0; c < in->nconfigs; c++) {
        double v[3];
        metric_values(&in->totals[c], v);
        fprintf(f, "%d ", c);
        rt_gp_datum(f, in->config_labels[c]);
        fprintf(f, " %.9g %.9g %.9g\n", v[0], v[1], v[2]);
    }
    return close_w(f, path, err, errlen);
}

static bool write_layers_dat(const char *path, const acc_plot_input *in, char *err,
                             size_t errlen)
{
    FILE *f = open_w(path, err, errlen);
    if (!f)
        return false;
    fputs("# tec accelerator sweep: every layer on every configuration\n"
          "# config layer latency_us energy_pj edp_pj_us\n", f);
    for (int c = 0; c < in->nconfigs; c++) {
        for (int l = 0; l < in->nlayers; l++) {
            double v[3];
            metric_values(&in->layers[(size_t)c * (size_t)in->nlayers + (size_t)l], v);
            fprintf(f, "%d %d %.9g %.9g %.9g\n", c, l, v[0], v[1], v[2]);
        }
        fputc('\n', f);       /* gnuplot: one scan line per configuration */
    }
    return close_w(f, path, err, errlen);
}

/* ---------------------------------------------------------------- script */

/* Sizes grow with the number of labels so that none overlap. */
static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static void set_terminal(FILE *f, bool png, int w, int h)
{
    if (png)
        fprintf(f, "set terminal pngcairo noenhanced size %d,%d font 'sans,9'\n", w, h);
    else
        fprintf(f, "set terminal svg noenhanced size %d,%d dynamic font 'sans,9'\n", w, h);
}

static void set_output(FILE *f, const char *dir, const char *view, const metric *m, bool png)
{
    char name[4096];
    snprintf(name, sizeof name, "%s/%s_%s.%s", dir, view, m->file, png ? "png" : "svg");
    fputs("set output ", f);
    rt_gp_quote(f, name);
    fputc('\n', f);
}

static void config_tics(FILE *f, const acc_plot_input *in)
{
    fputs("set xtics rotate by 90 right (", f);
    for (int c = 0; c < in->nconfigs; c++) {
        fputs(c ? ", " : "", f);
        rt_gp_quote(f, in->config_labels[c]);
        fprintf(f, " %d", c);
    }
    fputs(")\n", f);
}

static void configs_chart(FILE *f, const char *dir, const char *dat, const acc_plot_input *in,
                          int k, bool png)
{
    const metric *m = &metrics[k];
    fputs("reset\n", f);
    set_terminal(f, png, clampi(300 + 14 * in->nconfigs, 640, 4000), 600);
    set_output(f, dir, "configs", m, png);
    fputs("unset key\nset grid ytics\nset logscale y\n"
          "set style fill solid 0.8 border -1\nset boxwidth 0.8\n", f);
    fprintf(f, "set xrange [-0.5:%d.5]\n", in->nconfigs - 1);
    config_tics(f, in);
    fprintf(f, "set title 'network %s per configuration'\nset ylabel '%s'\n", m->name,
            m->title);
    fputs("plot ", f);
    rt_gp_quote(f, dat);
    fprintf(f, " using 1:($%d > 0 ? $%d : NaN) with boxes lc rgb '#3465a4'\n", k + 3, k + 3);
}

static void layers_chart(FILE *f, const char *dir, const char *dat, const acc_plot_input *in,
                         int k, bool png)
{
    const metric *m = &metrics[k];
    fputs("reset\n", f);
    set_terminal(f, png, clampi(400 + 14 * in->nconfigs, 700, 4000),
                 clampi(250 + 13 * in->nlayers, 500, 8000));
    set_output(f, dir, "layers", m, png);
    fputs("unset key\nset palette rgbformulae 33,13,10\n", f);
    fprintf(f, "set xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\n", in->nconfigs - 1,
            in->nlayers - 1);
    config_tics(f, in);
    fputs("set ytics (", f);
    for (int l = 0; l < in->nlayers; l++) {
        fputs(l ? ", " : "", f);
        rt_gp_quote(f, in->layer_names[l]);
        fprintf(f, " %d", l);
    }
    fputs(")\n", f);
    fprintf(f, "set title '%s per layer and configuration'\nset cblabel 'log10 %s'\n",
            m->name, m->title);
    fputs("plot ", f);
    rt_gp_quote(f, dat);
    fprintf(f, " using 1:2:($%d > 0 ? log10($%d) : NaN) with image\n", k + 3, k + 3);
}

static bool write_script(const char *path, const char *dir, const char *cdat, const char *ldat,
                         const acc_plot_input *in, char *err, size_t errlen)
{
    FILE *f = open_w(path, err, errlen);
    if (!f)
        return false;
    fputs("# Charts of a tec accelerator sweep (written by tec; `gnuplot sweep.gp`\n"
          "# redraws them).  configs_*: network totals per configuration;\n"
          "# layers_*: every layer on every configuration, as log10 heat maps.\n", f);
    for (int png = 1; png >= 0; png--)
        for (int k = 0; k < 3; k++) {
            configs_chart(f, dir, cdat, in, k, png);
            layers_chart(f, dir, ldat, in, k, png);
        }
    fputs("set output\n", f);
    return close_w(f, path, err, errlen);
}

/* ---------------------------------------------------------------- gnuplot */

bool acc_run_gnuplot(const char *script, const char *log, char *err, size_t errlen)
{
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        snprintf(err, errlen, "tec: error: cannot run gnuplot: out of memory");
        return false;
    }
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    char *argv[] = {"gnuplot", (char *)script, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        snprintf(err, errlen, "tec: error: cannot run gnuplot: %s; install gnuplot (Debian: "
                 "gnuplot-nox) to draw the charts, whose data and script are in %s",
                 strerror(rc), script);
        return false;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            snprintf(err, errlen, "tec: error: waiting for gnuplot: %s", strerror(errno));
            return false;
        }
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return true;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
        snprintf(err, errlen, "tec: error: cannot run gnuplot (exit status 127); install "
                 "gnuplot (Debian: gnuplot-nox) to draw the charts of %s", script);
    else if (WIFEXITED(st))
        snprintf(err, errlen, "tec: error: gnuplot failed on %s (exit status %d); its "
                 "messages are in %s", script, WEXITSTATUS(st), log);
    else
        snprintf(err, errlen, "tec: error: gnuplot was killed by signal %d on %s",
                 WIFSIGNALED(st) ? WTERMSIG(st) : 0, script);
    return false;
}

bool acc_plot_sweep(const char *dir, const acc_plot_input *in, char *err, size_t errlen)
{
    if (in->nconfigs < 1 || in->nlayers < 1) {
        snprintf(err, errlen, "tec: error: nothing to plot (%d configurations, %d layers)",
                 in->nconfigs, in->nlayers);
        return false;
    }
    /* Absolute paths in the script, so that it redraws the charts from
     * any working directory. */
    char *abs = realpath(dir, NULL);
    if (!abs) {
        snprintf(err, errlen, "tec: error: %s: %s", dir, strerror(errno));
        return false;
    }
    char cdat[4096], ldat[4096], gp[4096], log[4096];
    dir = abs;
    bool ok = join(cdat, sizeof cdat, dir, "sweep_configs.dat", err, errlen) &&
           join(ldat, sizeof ldat, dir, "sweep_layers.dat", err, errlen) &&
           join(gp, sizeof gp, dir, "sweep.gp", err, errlen) &&
           join(log, sizeof log, dir, "gnuplot.log", err, errlen) &&
           write_configs_dat(cdat, in, err, errlen) && write_layers_dat(ldat, in, err, errlen) &&
           write_script(gp, dir, cdat, ldat, in, err, errlen) &&
           acc_run_gnuplot(gp, log, err, errlen);
    free(abs);
    return ok;
}
