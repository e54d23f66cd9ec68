#!/bin/bash
# bench/sched.sh — operator scheduling (doc/scheduling.md): every strategy
# on GoogLeNet, ResNet-18 (little parallelism) and bench/wide.te (eight
# independent branches), on
#   (a) two CPU workers of one core each (cpu:1,cpu:1), measured, against
#       one worker with two intra-op threads (cpu:2, serial), measured;
#   (b) one CPU core and a modeled accelerator (edge_os_32x32, the 32x32
#       output-stationary array; tpu_ws_128x128, the 128x128
#       weight-stationary one), simulated from the measured CPU costs.
#
#   bench/sched.sh [--out DIR]       (default: print only)
#   bench/sched.sh --chart CSV DIR   (redraw DIR/sched.svg from a measured CSV)
#
# With --out, writes DIR/sched.txt (this report), DIR/sched.csv and the
# chart DIR/sched.svg (makespan per strategy, gnuplot; log scale, labels
# as written: no gnuplot markup, so tpu_ws_128x128 keeps its underscores).  Environment: TEC
# (default ./tec), REPEAT (runs of each schedule, default 5), MODELS (paths).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
srcdir=${srcdir:-$here}
TEC=${TEC:-$here/tec}
REPEAT=${REPEAT:-5}
PYTHON=${PYTHON:-/usr/bin/python3}
out=
chart_only=
if [ "${1:-}" = --out ]; then out=$2; mkdir -p "$out"; fi
# --chart CSV DIR: redraw DIR/sched.svg from a sched.csv already measured
if [ "${1:-}" = --chart ]; then chart_only=$2; out=$3; fi
models=${MODELS:-"$srcdir/examples/googlenet.te $srcdir/examples/resnet18.te $srcdir/bench/wide.te"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
csv=$tmp/sched.csv
echo "model,devices,strategy,timeline,makespan_us,serial_us,critical_path_us,work_per_device_us" >"$csv"

# run MODEL DEVICES STRATEGY: one line of the CSV from the schedule's trace.
run() {
    local model=$1 devices=$2 strategy=$3 name
    name=$(basename "$model" .te)
    "$TEC" -O2 --sched="$strategy" --devices="$devices" --repeat "$REPEAT" \
        --sched-trace="$tmp/t.json" "$model" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
    "$PYTHON" - "$tmp/t.json" "$name" "$devices" "$strategy" >>"$csv" <<'PY'
import json, os, sys
s = json.load(open(sys.argv[1]))["schedule"]
devices = "+".join(os.path.basename(d).replace(".cfg", "") for d in sys.argv[3].split(","))
print("%s,%s,%s,%s,%.1f,%.1f,%.1f,%.1f" % (sys.argv[2], devices, sys.argv[4], s["timeline"],
      s["makespan_us"], s["serial_us"], s["critical_path_us"], s["work_per_device_us"]))
PY
}

if [ -n "$chart_only" ]; then cp "$chart_only" "$csv"; fi
for model in $models; do
    [ -n "$chart_only" ] && break
    "$TEC" -O2 "$model" >/dev/null   # warm the kernel cache
    run "$model" cpu:2 serial
    for s in serial op path dynamic dynamic-cp; do
        run "$model" cpu:1,cpu:1 $s
    done
    for cfg in edge_os_32x32 tpu_ws_128x128; do
        for s in op path dynamic dynamic-cp; do
            run "$model" "cpu:1,acc:$srcdir/accel/configs/$cfg.cfg" $s
        done
    done
done

# What two processors give right now: one single-threaded run of wide.te
# alone, then two at once (on a machine shared with other work the second
# processor may be busy: a ratio of 1.0 means two free cores, 2.0 one).
[ -z "$chart_only" ] || capacity=-
median_us() { "$TEC" -O2 --threads 1 --repeat 50 "$srcdir/bench/wide.te" | sed -n 's/^time: .*: \(.*\) us$/\1/p'; }
if [ -z "$chart_only" ]; then
alone=$(median_us)
median_us >"$tmp/c1" & median_us >"$tmp/c2"; wait
capacity=$("$PYTHON" -c "import sys; a=float(sys.argv[1]); print('%.2f' % ((float(open(sys.argv[2]).read()) + float(open(sys.argv[3]).read())) / 2 / a))" "$alone" "$tmp/c1" "$tmp/c2")
fi

report() {
    echo "# bench/sched.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) processors," \
         "load $(cut -d' ' -f1-3 /proc/loadavg), $REPEAT runs of each schedule (medians)"
    echo "# two single-threaded runs at once took ${capacity}x as long as one alone (1.00: two free cores, 2.00: one)"
    echo "# (a) measured on CPU workers; (b) cpu:1 + accelerator, simulated from measured CPU costs"
    "$PYTHON" - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("%-10s %-22s %-11s %-9s %11s %11s %8s %11s" % ("model", "devices", "strategy", "timeline",
      "makespan ms", "serial ms", "speedup", "bound ms"))
for r in rows:
    ms, ser = float(r["makespan_us"]) / 1e3, float(r["serial_us"]) / 1e3
    bound = max(float(r["critical_path_us"]), float(r["work_per_device_us"])) / 1e3
    print("%-10s %-22s %-11s %-9s %11.2f %11.2f %7.2fx %11.2f" % (r["model"], r["devices"],
          r["strategy"], r["timeline"], ms, ser, ser / ms if ms else 0, bound))
PY
}
[ -n "$chart_only" ] || report | tee "$tmp/sched.txt"

if [ -n "$out" ]; then
    [ -n "$chart_only" ] || cp "$tmp/sched.txt" "$csv" "$out/"
    # The chart: makespan per strategy, one group of bars per model and devices.
    "$PYTHON" - "$csv" "$tmp/chart.dat" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
strategies = ["serial", "op", "path", "dynamic", "dynamic-cp"]
groups = []
for r in rows:
    g = "%s %s" % (r["model"], r["devices"])
    if g not in groups:
        groups.append(g)
with open(sys.argv[2], "w") as f:
    f.write("group " + " ".join(strategies) + "\n")
    for g in groups:
        cells = []
        for s in strategies:
            v = [r for r in rows if "%s %s" % (r["model"], r["devices"]) == g
                 and r["strategy"] == s]
            # the accelerator groups' serial bar is the one-core CPU baseline
            ms = float(v[0]["makespan_us"]) / 1e3 if v else (
                float([r for r in rows if "%s %s" % (r["model"], r["devices"]) == g][0]["serial_us"]) / 1e3
                if s == "serial" else float("nan"))
            cells.append("%.3f" % ms)
        f.write('"%s" %s\n' % (g, " ".join(cells)))
PY
    cat >"$tmp/chart.gp" <<GP
set terminal svg size 1200,500 dynamic noenhanced
set output '$out/sched.svg'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
# makespans span 0.03 ms to 35 ms: a linear axis hides the small ones
set logscale y
set ylabel 'makespan (ms, log scale)'
set xtics rotate by -30 font ',9' noenhanced
set key outside right
set title 'tec --sched: makespan per strategy (lower is better)'
plot '$tmp/chart.dat' using 2:xtic(1) title 'serial', '' using 3 title 'op', \
     '' using 4 title 'path', '' using 5 title 'dynamic', '' using 6 title 'dynamic-cp'
GP
    gnuplot "$tmp/chart.gp"
fi
