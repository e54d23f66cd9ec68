# make check-random runs its programs in batches: a mismatch in a batch is
# traced to the one program that has it, which is reduced and saved.  A
# wrapper around tec plants the mismatches: at -O2 it changes program 7's
# first statement's tensor (named in the mismatch: found by its name), or it fails when
# program 7 is there (not named: found by halving the batch); with
# schedules, the interpreter changes that tensor when the program has a
# schedule (the reference, the interpreter without them, does not).
. "$srcdir/testsuite/cli/lib.inc"
check="$srcdir/testsuite/random/check_random.py"
cat >faulty <<EOF
#!/bin/sh
# faulty LEVEL PROGRAM --save-outputs DIR
[ "\$1" = -O2 ] && [ "\$MODE" = exit ] && grep -q '^p7_t9\[' "\$2" && { echo "tec: error: planted" >&2; exit 1; }
"$TEC" "\$@" || exit \$?
# (sched: the interpreter gets a program with a schedule wrong)
if { [ "\$1" = -O2 ] && [ "\$MODE" = value ]; } ||
   { [ "\$1" = --interp ] && [ "\$MODE" = sched ] && grep -q '^schedule ' "\$2"; }; then
    [ -e "\$4/p7_t9.npy" ] &&
        "$PYTHON" -c 'import numpy as np, sys; a = np.load(sys.argv[1]); np.save(sys.argv[1], a - (abs(a) + 1))' "\$4/p7_t9.npy"
fi
exit 0
EOF
chmod +x faulty

# Without a wrapper, the same programs agree.
"$PYTHON" "$check" "$TEC" 10 3 ok 10 2 >out 2>&1 || { cat out; fail "a clean run"; }
grep -q '^check-random: 10 of 10 programs agree' out || { cat out; fail "a clean run's summary"; }

for mode in value exit; do
    MODE=$mode "$PYTHON" "$check" "$PWD/faulty" 10 3 $mode 10 2 >out 2>&1
    [ $? = 1 ] || { cat out; fail "$mode: exit status"; }
    grep -q '^check-random: program 7 of seed 3: -O2 ' out || { cat out; fail "$mode: the program found"; }
    head -1 $mode/failing.te | grep -q '^# check-random seed 3, program 7: -O2 ' ||
        { cat $mode/failing.te; fail "$mode: failing.te's first line"; }
    # reduced to program 7 alone, its first statement kept
    grep -q '^p7_t9\[' $mode/failing.te || { cat $mode/failing.te; fail "$mode: p7_t9 dropped"; }
    ! grep -q '^p[0-689]_' $mode/failing.te || { cat $mode/failing.te; fail "$mode: other programs left"; }
done
grep -q '^# check-random seed 3, program 7: -O2 vs --interp: p7_t9.npy: ' value/failing.te ||
    { head -1 value/failing.te; fail "value: the mismatch"; }
grep -q '^# check-random seed 3, program 7: -O2 exits 1, --interp exits 0: tec: error: planted' exit/failing.te ||
    { head -1 exit/failing.te; fail "exit: the mismatch"; }

# With schedules: the same programs, each statement a def with a random
# schedule, agree at every level with the interpreter without schedules;
# a wrong result of the scheduled program is found and reduced to the
# program and a schedule.
"$PYTHON" "$check" "$TEC" 10 3 sched-ok 10 2 1 >out 2>&1 || { cat out; fail "a clean run with schedules"; }
grep -q '^check-random: 10 of 10 programs agree at .* each with schedules' out ||
    { cat out; fail "a clean run with schedules: its summary"; }
grep -q '^schedule p[0-9]*_t[0-9]*_f {' sched-ok/work/prog0.te || fail "no schedule in the programs"
MODE=sched "$PYTHON" "$check" "$PWD/faulty" 10 3 sched 10 2 1 >out 2>&1
[ $? = 1 ] || { cat out; fail "sched: exit status"; }
grep -q '^check-random: program 7 of seed 3: --interp vs --interp without schedules: p7_t9.npy: ' out ||
    { cat out; fail "sched: the program found"; }
grep -q '^p7_t9 = p7_t9_f(' sched/failing.te && grep -q '^schedule ' sched/failing.te ||
    { cat sched/failing.te; fail "sched: the reduced program"; }
! grep -q '^p[0-689]_' sched/failing.te || { cat sched/failing.te; fail "sched: other programs left"; }

# Outputs below 1 are compared at the inputs' scale, 1: program 7154 of
# seed 15 is min over j of (t9 - (t0 + t9)) + t0, zero but for rounding,
# which -O2 and --interp round differently (6e-8 apart, at a largest
# magnitude of 6e-8).
cat >cancel.te <<'TE'
input p7154_t0: f32[5, 2]
input p7154_t2: f32[5, 2]
p7154_t7[i, j] = (tanh(p7154_t0[i, j]) - p7154_t2[i, j])
p7154_t9[i, j] = (sqrt(abs(max(p7154_t2[i, j], p7154_t0[i, j])) + 1.0) - (p7154_t0[i, j] * (p7154_t2[i, j] - p7154_t7[i, j])))
p7154_t10[i] min= ((p7154_t9[i, j] - (p7154_t0[i, j] + p7154_t9[i, j])) + p7154_t0[i, j])
output p7154_t10
TE
mkdir -p cancel
"$PYTHON" -c '
import sys
sys.path.insert(0, sys.argv[1])
import check_random
print(check_random.disagreement(sys.argv[2], open("cancel.te").read(), "cancel"))' \
    "$srcdir/testsuite/random" "$TEC" >out 2>&1
[ "$(cat out)" = None ] || { cat out; fail "rounding of a cancellation taken for a mismatch"; }

# A second C compiler (make check-random CC2=...): the compiled levels run
# with it too.  One that cannot compile is a mismatch of its levels, found
# at the first compiled one; one that is not there is a usage error.
cat >badcc <<'SH'
#!/bin/sh
echo "badcc: internal compiler error" >&2
exit 1
SH
chmod +x badcc
"$PYTHON" "$check" "$TEC" 2 3 cc2 2 2 0 "$PWD/badcc" >out 2>&1
[ $? = 1 ] || { cat out; fail "CC2: exit status"; }
grep -q "^check-random: program 0 of seed 3: -O0 CC=$PWD/badcc exits 1, --interp exits 0: " out ||
    { cat out; fail "CC2: the mismatch"; }
"$PYTHON" "$check" "$TEC" 2 3 cc2 2 2 0 no-such-cc >out 2>&1
[ $? = 2 ] && grep -q "^check-random: no C compiler 'no-such-cc' (CC2)" out ||
    { cat out; fail "CC2: a missing compiler"; }

# Resuming a seed at its program K (FIRST, or SEED:K to
# tools/random-chunks.sh) runs the very programs a whole run has from K
# on: the planted mismatch of program 7 is found from 5, and a run from 8
# passes it by.
MODE=value "$PYTHON" "$check" "$PWD/faulty" 10 3 from5 10 2 0 "" 5 >out 2>&1
[ $? = 1 ] && grep -q '^check-random: program 7 of seed 3: -O2 vs --interp: p7_t9.npy: ' out ||
    { cat out; fail "FIRST: program 7 from 5"; }
MODE=value "$PYTHON" "$check" "$PWD/faulty" 10 3 from8 2 2 0 "" 8 >out 2>&1 ||
    { cat out; fail "FIRST: a run from 8"; }
grep -q '^check-random: 2 of 2 programs agree (programs 8..9 of seed 3) at ' out ||
    { cat out; fail "FIRST: the summary of a run from 8"; }
