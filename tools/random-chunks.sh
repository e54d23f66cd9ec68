#!/bin/bash
# tools/random-chunks.sh TEC FIRST LAST [N [CC2 [SCHEDULES]]]: the
# differential random tester (testsuite/random/check_random.py) in chunks
# of N programs (default 1000), one chunk per seed FIRST..LAST, one after
# another.  FIRST may be SEED:K to resume seed SEED at its program K (the
# programs before K are made but not run).  Every progress line of a
# chunk ("check-random: N of M programs agree ...", one per batch) and its
# last line (or the mismatch it found) is printed as "seed S: LINE" as it
# comes, so a run stopped halfway still says which programs agreed: the
# programs of seed S up to the last line's count (from K on).  Meant for
# long runs in the background at low priority, e.g.
#   setsid sh -c 'echo 19 >/proc/self/autogroup; exec nice -n 19 \
#       tools/random-chunks.sh ./tec 1037:400 1100 1000 clang' >>log 2>&1 </dev/null &
# (with the kernel's autogroups, nice alone does not lower a job against
# other sessions: its own session's group must be niced).
# A chunk that disagrees keeps its log and reduced program in OUT/seed-S/
# (OUT: $RANDOM_OUT, default testsuite/out/random-chunks); the next seed
# runs on.  Programs run RANDOM_BATCH at a time (default 100: the C
# compilers' work per program is the same, and the fixed costs of a
# level's run are shared by more programs).  A run is stopped after 600 s
# of processor time; its wall-clock limit is RANDOM_TIMEOUT (default here
# 7200 s: at nice 19 on a crowded machine a batch can wait long for a
# processor, which is no finding).
set -u
export RANDOM_TIMEOUT=${RANDOM_TIMEOUT:-7200}
tec=$1 first=$2 last=$3 n=${4:-1000} cc2=${5:-} sched=${6:-0}
batch=${RANDOM_BATCH:-100}
here=$(cd "$(dirname "$0")/.." && pwd)
out=${RANDOM_OUT:-testsuite/out/random-chunks}
py=${PYTHON:-/usr/bin/python3}
start=0
case $first in *:*) start=${first#*:} first=${first%%:*} ;; esac
for ((s = first; s <= last; s++)); do
    rm -rf "$out/seed-$s"
    mkdir -p "$out/seed-$s"
    "$py" "$here/testsuite/random/check_random.py" "$tec" "$n" "$s" "$out/seed-$s" "$batch" 1 \
        "$sched" "$cc2" "$start" 2>&1 | tee "$out/seed-$s/log" |
        while IFS= read -r line; do
            case $line in check-random:*) echo "seed $s: $line" ;; esac
        done
    line=$(grep '^check-random:' "$out/seed-$s/log" | tail -1)
    [ -n "$line" ] || echo "seed $s: no summary, see $out/seed-$s/log"
    case $line in *" $((n - start)) of $((n - start)) programs agree"*) rm -rf "$out/seed-$s" ;; esac
    start=0
done
