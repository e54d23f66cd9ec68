/* frontend/kernel.h — index statements (internal to frontend/, see env.h). */
#ifndef TEC_FE_KERNEL_H
#define TEC_FE_KERNEL_H

#include "frontend/env.h"

/* Analyses one index statement in instance i and adds it to the open
 * stage (opening one if needed). */
void fe_index_stmt(fe_ctx *c, fe_inst *i, const fe_stmt *s);

#endif
