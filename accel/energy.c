/* accel/energy.c — what an on-chip buffer costs per access and in area
 * when the config gives no figure: a CACTI-style fit to published 45 nm
 * points, scaled to the config's technology node.  doc/accel.md (section
 * 3.5) gives the model, its sources and its range. */
#include "accel/accel.h"

#include <math.h>

/* Horowitz, "Computing's energy problem (and what we can do about it)",
 * ISSCC 2014, 45 nm: a 64-bit read from an 8 kB SRAM costs 10 pJ, from
 * 32 kB 20 pJ, from 1 MB 100 pJ.  Read energy grows with the square root
 * of the capacity (the bit and word lines a read drives grow with the side
 * of the array, as CACTI's wire-dominated model gives): 10 pJ per 8 bytes
 * at 8 kB, times sqrt(capacity / 8 kB), is 20 pJ at 32 kB and 113 pJ at
 * 1 MB, within 13% of the three points. */
#define FIT_PJ_PER_BYTE (10.0 / 8.0)
#define FIT_BYTES 8192.0
#define FIT_NM 45.0

/* A 6T SRAM cell of Intel's 45 nm process is 0.346 um^2 (Mistry et al.,
 * IEDM 2007); decoders, sense amplifiers and wiring take the array's
 * efficiency to about 70% (CACTI's typical area efficiency for caches of
 * this size), so 0.346 / 0.7 um^2 per bit. */
#define CELL_UM2 0.346
#define ARRAY_EFFICIENCY 0.7

/* Horowitz (ISSCC 2014), 45 nm: an 8-bit multiplier is 282 um^2 and an
 * 8-bit adder 36 um^2; a multiplier grows with the square of its width, an
 * adder linearly. */
#define MUL8_UM2 282.0
#define ADD8_UM2 36.0

double acc_sram_fit_pj(int64_t bytes, int64_t word_bytes, double tech_nm)
{
    return FIT_PJ_PER_BYTE * (double)word_bytes * sqrt((double)bytes / FIT_BYTES) *
           (tech_nm / FIT_NM);
}

double acc_sram_word_pj(const acc_config *c, acc_operand op, bool write)
{
    double given = write ? c->energy.sram_write_pj : c->energy.sram_read_pj;
    if (given >= 0)
        return given;
    return acc_sram_fit_pj(c->sram_bytes[op], c->word_bytes, c->tech_nm);
}

double acc_sram_area_mm2(int64_t bytes, double tech_nm)
{
    double s = tech_nm / FIT_NM;
    return (double)bytes * 8.0 * CELL_UM2 / ARRAY_EFFICIENCY * s * s * 1e-6;
}

double acc_pe_area_mm2(const acc_config *c)
{
    double w = (double)c->word_bytes, s = c->tech_nm / FIT_NM;
    return (double)c->depth * (MUL8_UM2 * w * w + ADD8_UM2 * w) * s * s * 1e-6;
}

double acc_area_mm2(const acc_config *c)
{
    double a = (double)c->rows * (double)c->cols * acc_pe_area_mm2(c);
    for (int op = 0; op < ACC_NOPERANDS; op++)
        a += acc_sram_area_mm2(c->sram_bytes[op], c->tech_nm);
    return a;
}
