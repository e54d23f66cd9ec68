# The floors import only what doc/architecture.md allows (tools/check-layers.sh):
# the source tree passes, and a tree with one forbidden include is caught
# with its file and line.
. "$srcdir/testsuite/cli/lib.inc"
expect_status 0 sh "$srcdir/tools/check-layers.sh" "$srcdir"
[ -s out ] && { cat out; fail "unexpected output"; }

mkdir -p t/ir t/passes t/codegen t/runtime t/accel t/frontend t/driver
printf '#include "ir/ir.h"\n#include <stdio.h>\n' >t/ir/ok.c
printf '#include "ir/ir.h"\n#include "passes/passes.h"\n' >t/passes/ok.c
printf '#include "config.h"\n#include "codegen/codegen.h"\n' >t/codegen/ok.c
# a documented exception: one named header of a higher floor
printf '#include "codegen/codegen.h"\n#include "passes/analyze.h"\n' >t/runtime/ok.c
printf '#include "runtime/profile.h"\n' >t/accel/ok.c
printf '#include "runtime/exec.h"\n#include "passes/passes.h"\n' >t/driver/ok.c
expect_status 0 sh "$srcdir/tools/check-layers.sh" t

printf '#include "ir/ir.h"\n\n#include "runtime/profile.h"\n' >t/ir/interp.c
printf '#include "codegen/target.h"\n' >t/passes/auto.c
printf '#include "frontend/frontend.h"\n' >t/codegen/bad.h
printf '#include "frontend/sema.h"\n#include "frontend/kernel.h"\n' >t/frontend/sema.c
printf '#include "runtime/exec.h"\n' >t/frontend/kernel.c
# inside frontend/: a part below including one above, a header declaring
# what its .c does not define, a file with no place in the order
printf '#include "frontend/env.h"\n\n#include "frontend/kernel.h"\n' >t/frontend/env.c
printf '#include "frontend/env.h"\nvoid fe_lower_stage(int n);\nvoid fe_close_stage(int n);\n' >t/frontend/lower.h
printf '#include "frontend/lower.h"\nvoid fe_lower_stage(int n)\n{\n    fe_close_stage(n);\n}\n' >t/frontend/lower.c
printf '#include "frontend/env.h"\n' >t/frontend/extra.c
printf '#include "passes/schedule/schedule.h"\n' >t/runtime/bad.c
printf '#include "runtime/exec.h"\n' >t/accel/bad.c
expect_status 1 sh "$srcdir/tools/check-layers.sh" t
printf '%s\n' 't/ir/interp.c:3: ir/ may not include "runtime/profile.h"' \
    't/passes/auto.c:1: passes/ may not include "codegen/target.h"' \
    't/codegen/bad.h:1: codegen/ may not include "frontend/frontend.h"' \
    't/frontend/kernel.c:1: frontend/ may not include "runtime/exec.h"' \
    't/runtime/bad.c:1: runtime/ may not include "passes/schedule/schedule.h"' \
    't/accel/bad.c:1: accel/ may not include "runtime/exec.h"' \
    't/frontend/env.c:3: frontend/env may not include "frontend/kernel.h"' \
    't/frontend/extra.c: frontend/extra has no place in the order of tools/check-layers.sh' \
    't/frontend/lower.h:3: declares fe_close_stage, which frontend/lower.c does not define' >want
# the checker names files relative to the tree it checks
sed 's#^#t/#' out >got
diff -u want got || fail "forbidden includes not reported as expected"
