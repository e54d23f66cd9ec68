/* passes/work.h — how much work a statement does, counted statically.
 *
 * The count is of statement executions: every STORE, LET, EVAL and ASSERT
 * once per iteration of the loops around it (below s), both arms of an IF
 * (and the IF itself), a block's init as often as its body.  It needs
 * constant loop bounds and scalar IR; vector IR (read back after
 * vectorize) is not counted.  Used by serialize (a parallel loop with
 * little work runs serially) and by the unit tests (how many inputs the
 * interpreter can afford on a function).
 */
#ifndef TEC_PASSES_WORK_H
#define TEC_PASSES_WORK_H

#include <stdint.h>

#include "ir/ir.h"

/* The statement executions of s, or cap + 1 when there are more (cap >= 0);
 * -1 when a loop bound is not a constant or s holds vector IR. */
int64_t pass_stmt_work(const ir_stmt *s, int64_t cap);

#endif
