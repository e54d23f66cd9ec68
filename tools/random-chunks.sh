#!/bin/bash
# tools/random-chunks.sh TEC FIRST LAST [N [CC2 [SCHEDULES]]]: the
# differential random tester (testsuite/random/check_random.py) in chunks
# of N programs (default 1000), one chunk per seed FIRST..LAST, one after
# another, each chunk's last line ("check-random: N of N programs agree
# ...", or the mismatch it found) printed as "seed S: LINE".  Meant for
# long runs in the background at low priority, e.g.
#   nice -n 19 taskset -c 1 tools/random-chunks.sh ./tec 1001 1100 1000 clang >>log
# A chunk that disagrees keeps its log and reduced program in OUT/seed-S/
# (OUT: $RANDOM_OUT, default testsuite/out/random-chunks); the next seed
# runs on.  A run is stopped after 600 s of processor time; its wall-clock
# limit is RANDOM_TIMEOUT (default here 7200 s: at nice 19 on a crowded
# machine a batch can wait long for a processor, which is no finding).
set -u
export RANDOM_TIMEOUT=${RANDOM_TIMEOUT:-7200}
tec=$1 first=$2 last=$3 n=${4:-1000} cc2=${5:-} sched=${6:-0}
here=$(cd "$(dirname "$0")/.." && pwd)
out=${RANDOM_OUT:-testsuite/out/random-chunks}
py=${PYTHON:-/usr/bin/python3}
for ((s = first; s <= last; s++)); do
    rm -rf "$out/seed-$s"
    mkdir -p "$out/seed-$s"
    "$py" "$here/testsuite/random/check_random.py" "$tec" "$n" "$s" "$out/seed-$s" 50 1 "$sched" "$cc2" \
        >"$out/seed-$s/log" 2>&1
    line=$(grep '^check-random:' "$out/seed-$s/log" | tail -1)
    echo "seed $s: ${line:-no summary, see $out/seed-$s/log}"
    case $line in *"$n of $n programs agree"*) rm -rf "$out/seed-$s" ;; esac
done
