/* frontend/stage.h — stages, layers and graph buffers (internal to
 * frontend/, see env.h): which temporaries of a stage the rest of a def
 * still reads, layer and buffer names, and closing a stage into an IR
 * function (lower.h) and its call in the graph. */
#ifndef TEC_FE_STAGE_H
#define TEC_FE_STAGE_H

#include "frontend/env.h"

/* The names d's body references and where, computed once (the program
 * uses a pseudo-def). */
void fe_def_refs(fe_ctx *c, fe_def *d);

/* prefix.name, or name at the top. */
const char *fe_join_name(fe_ctx *c, const char *prefix, const char *name);
/* Claims a layer name; false (after an error naming both places) if it
 * is taken. */
bool fe_claim_layer(fe_ctx *c, const char *layer, fe_span loc);
/* A layer name not taken yet: base, else base.copy, base.copy2 ...,
 * claimed for a layer made at loc. */
const char *fe_claim_free_layer(fe_ctx *c, const char *base, fe_span loc);

ir_buffer *fe_find_buffer(fe_ctx *c, const char *name);
/* Adds b to the graph (its name must be free). */
void fe_add_buffer(fe_ctx *c, ir_buffer *b);
void fe_rename_buffer(fe_ctx *c, ir_buffer *b, const char *name);
/* A free name for a TEMP graph buffer: base, else base.out, base.out2 ... */
const char *fe_free_buffer_name(fe_ctx *c, const char *base);
/* Makes `name` free for an input or param: a TEMP buffer holding it moves
 * aside.  False if a buffer whose name matters has it. */
bool fe_reserve_name(fe_ctx *c, const char *name);
/* Gives t (defined by a stage) a TEMP graph buffer named base (or a free
 * name made from it). */
void fe_give_buffer(fe_ctx *c, fe_tensor *t, const char *base);

/* Appends {t, name} to a growable array of stage arguments. */
void fe_add_sarg(fe_ctx *c, fe_sarg **arr, int *n, int *cap, fe_tensor *t, const char *name);
/* Lowers st to a function of `layer` and `op` taking params (storage
 * tensors with graph buffers, in order) and adds its call to the graph. */
void fe_emit_stage(fe_ctx *c, const fe_stage *st, const char *layer, const char *op,
                   fe_span loc, const fe_sarg *params, int np);
/* Ends the open stage of `in` (lowers it and adds its call to the graph). */
void fe_close_stage(fe_ctx *c, fe_inst *in);

#endif
