/* frontend/sema.h — elaboration of .te programs (internal to frontend/,
 * see env.h for the parts and their order). */
#ifndef TEC_FE_SEMA_H
#define TEC_FE_SEMA_H

#include "frontend/env.h"

/* Runs the program; false if anything failed. */
bool fe_elaborate(fe_ctx *c);

#endif
