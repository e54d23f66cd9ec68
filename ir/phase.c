/* ir/phase.c — the phase clocks of --time-phases (ir/phase.h). */
#include "ir/phase.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

enum { MAX_PHASES = 64, MAX_DEPTH = 16, NOTE_LEN = 96 };

typedef struct phase_clock {
    double wall, cpu, child;   /* seconds */
} phase_clock;

typedef struct phase_row {
    const char *name;
    phase_clock own;           /* time charged to this phase alone */
    int depth;                 /* nesting depth when it first started */
    int count;                 /* times it started */
    char note[NOTE_LEN];
} phase_row;

static struct {
    bool on;
    FILE *out;
    phase_clock start;
    phase_row rows[MAX_PHASES];
    int nrows;
    int stack[MAX_DEPTH];      /* row of each open phase */
    phase_clock since[MAX_DEPTH];   /* when it (last) resumed */
    int depth, lost;           /* open phases; pushes beyond MAX_DEPTH or MAX_PHASES */
} P;

static double seconds(clockid_t id)
{
    struct timespec t;
    if (clock_gettime(id, &t) != 0)
        return 0;
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static phase_clock now(void)
{
    struct rusage ru;
    double child = 0;
    if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
        child = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
                (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
    return (phase_clock){seconds(CLOCK_MONOTONIC), seconds(CLOCK_PROCESS_CPUTIME_ID), child};
}

static void charge(phase_row *r, phase_clock from, phase_clock to)
{
    r->own.wall += to.wall - from.wall;
    r->own.cpu += to.cpu - from.cpu;
    r->own.child += to.child - from.child;
}

static void at_exit(void)
{
    ir_phase_report(P.out);
}

void ir_phase_enable(FILE *out)
{
    if (P.on)
        return;
    P.on = true;
    P.out = out;
    P.start = now();
    atexit(at_exit);
}

bool ir_phase_enabled(void) { return P.on; }

void ir_phase_push(const char *name)
{
    if (!P.on)
        return;
    if (P.depth >= MAX_DEPTH) {
        P.lost++;
        return;
    }
    int r = 0;
    while (r < P.nrows && strcmp(P.rows[r].name, name) != 0)
        r++;
    if (r == P.nrows) {
        if (P.nrows == MAX_PHASES) {
            P.lost++;
            return;
        }
        P.rows[P.nrows++] = (phase_row){.name = name, .depth = P.depth};
    }
    phase_clock t = now();
    if (P.depth > 0)   /* the enclosing phase pauses */
        charge(&P.rows[P.stack[P.depth - 1]], P.since[P.depth - 1], t);
    P.rows[r].count++;
    P.stack[P.depth] = r;
    P.since[P.depth] = t;
    P.depth++;
}

void ir_phase_pop(void)
{
    if (!P.on)
        return;
    if (P.lost) {   /* a push that was not recorded */
        P.lost--;
        return;
    }
    if (P.depth == 0)
        return;
    phase_clock t = now();
    P.depth--;
    charge(&P.rows[P.stack[P.depth]], P.since[P.depth], t);
    if (P.depth > 0)   /* the enclosing phase resumes */
        P.since[P.depth - 1] = t;
}

void ir_phase_note(const char *fmt, ...)
{
    if (!P.on || P.depth == 0)
        return;
    phase_row *r = &P.rows[P.stack[P.depth - 1]];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note, sizeof r->note, fmt, ap);
    va_end(ap);
}

void ir_phase_report(FILE *out)
{
    if (!P.on)
        return;
    while (P.depth > 0)
        ir_phase_pop();
    if (!out)
        out = stderr;
    phase_clock end = now(), sum = {0};
    fprintf(out, "tec: time by phase, ms: elapsed, CPU of tec, CPU of the C compiler\n");
    for (int i = 0; i < P.nrows; i++) {
        const phase_row *r = &P.rows[i];
        char name[48];
        snprintf(name, sizeof name, "%*s%s", 2 * r->depth, "", r->name);
        if (r->count > 1)
            snprintf(name + strlen(name), sizeof name - strlen(name), " (%d)", r->count);
        fprintf(out, "  %-26s %9.1f %9.1f %9.1f%s%s\n", name, 1e3 * r->own.wall,
                1e3 * r->own.cpu, 1e3 * r->own.child, r->note[0] ? "  " : "", r->note);
        sum.wall += r->own.wall;
        sum.cpu += r->own.cpu;
        sum.child += r->own.child;
    }
    fprintf(out, "  %-26s %9.1f %9.1f %9.1f\n", "other", 1e3 * (end.wall - P.start.wall - sum.wall),
            1e3 * (end.cpu - P.start.cpu - sum.cpu), 1e3 * (end.child - P.start.child - sum.child));
    fprintf(out, "  %-26s %9.1f %9.1f %9.1f\n", "total", 1e3 * (end.wall - P.start.wall),
            1e3 * (end.cpu - P.start.cpu), 1e3 * (end.child - P.start.child));
    fflush(out);
    P.on = false;
}
