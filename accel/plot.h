/* accel/plot.h — gnuplot charts of accelerator sweeps.
 *
 * tec writes the data (.dat) and a gnuplot script (.gp) and runs gnuplot
 * on it with an argv array (posix_spawnp, never a shell).  The data and
 * script stay next to the charts, so a chart can be restyled by editing
 * the script and running `gnuplot sweep.gp` again. */
#ifndef TEC_ACCEL_PLOT_H
#define TEC_ACCEL_PLOT_H

#include "accel/accel.h"

/* The results of a sweep: every layer on every configuration. */
typedef struct acc_plot_input {
    int nconfigs, nlayers;
    const char *const *config_labels;   /* nconfigs, e.g. "32x32 os 64kB" */
    const char *const *layer_names;     /* nlayers */
    const acc_result *layers;           /* [config * nlayers + layer] */
    const acc_result *totals;           /* nconfigs network totals */
} acc_plot_input;

/* Writes DIR/sweep_configs.dat, DIR/sweep_layers.dat and DIR/sweep.gp, and
 * runs gnuplot, which draws, as PNG and SVG:
 *   configs_{latency,energy,edp}  the network total per configuration;
 *   layers_{latency,energy,edp}   a heat map, layer by configuration.
 * gnuplot's own messages go to DIR/gnuplot.log.  Fails with "tec: error:
 * ..." when a file cannot be written or gnuplot is missing or fails. */
bool acc_plot_sweep(const char *dir, const acc_plot_input *in, char *err, size_t errlen);

/* Runs `gnuplot SCRIPT` (gnuplot found on PATH) with stdin from /dev/null
 * and stdout and stderr into LOG; true when it exits with status 0. */
bool acc_run_gnuplot(const char *script, const char *log, char *err, size_t errlen);

#endif
