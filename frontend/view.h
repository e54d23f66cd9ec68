/* frontend/view.h — views: reshape, permute, slice ... without copies
 * (internal to frontend/, see env.h). */
#ifndef TEC_FE_VIEW_H
#define TEC_FE_VIEW_H

#include "frontend/env.h"

/* Elaborates `NAME = VIEWOP(x, ...)`: a view of x, or a copy (made by a
 * layer named `layer`) where the layout allows no view; POISON after an
 * error. */
fe_value fe_view_call(fe_ctx *c, fe_inst *in, const fe_stmt *s, const char *layer);
/* The view t as a kernel's parameter `name` sees it: the same map over
 * a storage of its own (sharing t's buffer), named `name`. */
fe_tensor *fe_view_param(fe_ctx *c, fe_tensor *t, const char *name);
/* A tensor with its own buffer holding t's elements: t itself, or, for a
 * view, a copy made by a new layer (base name `layer`, op `op`). */
fe_tensor *fe_materialize(fe_ctx *c, fe_tensor *t, const char *layer, const char *op, fe_span loc);

#endif
