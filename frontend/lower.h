/* frontend/lower.h — a stage to an IR function (internal to frontend/,
 * see env.h). */
#ifndef TEC_FE_LOWER_H
#define TEC_FE_LOWER_H

#include "frontend/env.h"

/* Builds f's parameters and body: params[i] become ARG buffers in order;
 * the stage's other temporaries are function-local (ALLOC). */
void fe_lower_stage(ir_module *m, ir_func *f, const fe_stage *st,
                    const fe_sarg *params, int nparams, const char *op);

#endif
