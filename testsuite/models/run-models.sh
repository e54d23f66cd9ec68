#!/bin/bash
# testsuite/models/run-models.sh — the model tests of `make check`.
#
# For every testsuite/models/NAME/ that has a meta.json (written by
# tools/torch_ref.py), runs tec on the recorded program with the recorded
# options at -O0 and -O2 (--save-outputs) and compares the outputs with the
# stored PyTorch references in NAME/expected/ (testsuite/compare.py: max
# relative error 1e-4).  Then it profiles the program once at -O2
# (--report=JSON) and compares the report's total MACs and parameters and
# every layer's MACs with PyTorch's counts in meta.json
# (compare-profile.py).  A NAME/weights/ directory, if present, is passed as
# --weights.  PyTorch is not needed.
#
#   testsuite/models/run-models.sh [NAME...]     (default: every model)
#
# Prints "PASS: models/NAME -O2", "PASS: models/NAME profile" or "FAIL: ..."
# (with the log indented below) per run and "N passed, N failed" last;
# exits 1 if any failed.  Environment: srcdir, builddir (default: the tree
# this script is in), TEC (default $builddir/tec), PYTHON (default
# /usr/bin/python3), OUT (scratch, default $builddir/testsuite/out), OPTS
# (default "-O0 -O2"), PROFILE (default 1; 0 skips the profile check).
. "$(dirname "$0")/common.sh"
OUT=${OUT:-$builddir/testsuite/out}
OPTS=${OPTS:--O0 -O2}
PROFILE=${PROFILE:-1}
# A private kernel cache, as in run-tests.
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$OUT/cache}
mkdir -p "$OUT" || exit 1

# run_tec LOG STDOUT ARGS...: tec ARGS, its stdout appended to STDOUT and
# its stderr to LOG, after the command line; a failure is noted in LOG.
run_tec() {
    local log=$1 stdout=$2
    shift 2
    echo "tec $*" >"$log"
    "$TEC" "$@" >>"$stdout" 2>>"$log" || { echo "tec failed (exit status $?)" >>"$log"; return 1; }
}

if [ $# -gt 0 ]; then
    dirs=()
    for n in "$@"; do dirs+=("$here/$n"); done
else
    dirs=("$here"/*/)
fi

for dir in "${dirs[@]}"; do
    dir=${dir%/}
    name=$(basename "$dir")
    log=$OUT/models-$name.log
    if [ ! -f "$dir/meta.json" ]; then
        # A folder without references yet is skipped, unless asked for.
        if [ $# -gt 0 ]; then
            echo "$dir/meta.json: no such file (make it with tools/torch_ref.py)" >"$log"
            report "models/$name" 1 "$log"
        fi
        continue
    fi
    if ! mapfile -t f < <(meta_fields "$dir/meta.json" 2>"$log") || [ ${#f[@]} -lt 3 ]; then
        report "models/$name" 1 "$log"
        continue
    fi
    program=${f[2]}
    args=("${f[@]:3}")
    weights=()
    [ -d "$dir/weights" ] && weights=(--weights "$dir/weights")
    for opt in $OPTS; do
        got=$OUT/models-$name$opt
        log=$OUT/models-$name$opt.log
        rm -rf "$got"
        run_tec "$log" "$log" "$opt" "${args[@]}" "${weights[@]}" "$program" --save-outputs "$got" &&
            "$PYTHON" "$srcdir/testsuite/compare.py" "$dir/expected" "$got" >>"$log" 2>&1
        report "models/$name $opt" $? "$log"
    done
    [ "$PROFILE" = 0 ] && continue
    # The table goes to a file of its own: the log shows the comparison.
    json=$OUT/models-$name-profile.json
    log=$OUT/models-$name-profile.log
    rm -f "$json" "${json%.json}.txt"
    run_tec "$log" "${json%.json}.txt" -O2 --profile --report="$json" "${args[@]}" "${weights[@]}" "$program" &&
        "$PYTHON" "$here/compare-profile.py" "$dir/meta.json" "$json" >>"$log" 2>&1
    report "models/$name profile" $? "$log"
done

summary
