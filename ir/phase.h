/* ir/phase.h — where the time to the first result goes, phase by phase
 * (tec --time-phases).  Every floor may mark its phases:
 *
 *     ir_phase_push("frontend");  ...  ir_phase_pop();
 *
 * Phases nest; each phase is charged its own time only (a nested phase's
 * time is not counted twice), and phases of the same name add up (the
 * pipeline's three runs of `simplify` are one row).  Off unless
 * ir_phase_enable was called: push and pop then cost one test.
 *
 * Three clocks: elapsed (monotonic) time; the CPU time of tec itself,
 * every thread; the CPU time of the processes tec ran (the C compiler),
 * counted when they end.  Not thread-safe: phases are marked by the main
 * thread only. */
#ifndef TEC_IR_PHASE_H
#define TEC_IR_PHASE_H

#include <stdbool.h>
#include <stdio.h>

/* Starts the clocks; ir_phase_report(out) runs when the process exits
 * (out NULL: stderr). */
void ir_phase_enable(FILE *out);
bool ir_phase_enabled(void);

/* Starts phase `name` (a string that lives as long as the process, e.g.
 * a literal or a pass's registered name) inside the current one. */
void ir_phase_push(const char *name);
/* Ends the innermost phase. */
void ir_phase_pop(void);
/* A note for the innermost phase's row, e.g. "40 kernels, 3 compiled";
 * the last note of a phase wins. */
void ir_phase_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The table: one row per phase in the order they first started, with its
 * elapsed, own CPU and children's CPU milliseconds, and the total since
 * ir_phase_enable.  Phases still open are closed first. */
void ir_phase_report(FILE *out);

#endif
