#!/bin/bash
# bench/window.sh — window-class layers (bench/window_layers.te: max
# pooling, depthwise convolutions with their SiLU, a softmax) per layer,
# a tec build against another (TEC_VS), rounds taking turns in one
# invocation, one thread; each cell the smallest of the rounds' medians.
#   TEC=./tec TEC_VS=other/tec ROUNDS=3 REPEAT=20 bench/window.sh [--save]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
TEC=${TEC:-$here/../tec}
TEC_VS=${TEC_VS:-}
ROUNDS=${ROUNDS:-3}
REPEAT=${REPEAT:-20}
prog=${PROG:-$here/window_layers.te}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
builds=("$TEC")
[ -n "$TEC_VS" ] && builds+=("$TEC_VS")
for r in $(seq "$ROUNDS"); do
    for i in "${!builds[@]}"; do
        TEC_NUM_THREADS=1 "${builds[$i]}" -I "$here/../lib" -O2 "$prog" --profile --repeat "$REPEAT" \
            --report="$out/b$i.r$r.json" >/dev/null 2>&1 || { echo "window.sh: ${builds[$i]} failed" >&2; exit 1; }
    done
done
report() {
    echo "bench/window.sh: $(basename "$prog"), 1 thread, $ROUNDS rounds of --profile --repeat $REPEAT (min of the rounds' medians)"
    echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "new: $TEC${TEC_VS:+; old: $TEC_VS}"
    "${PYTHON:-python3}" - "$out" "${#builds[@]}" "$ROUNDS" <<'PY'
import json, sys
d, nb, nr = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
best = [{} for _ in range(nb)]
order = []
for b in range(nb):
    for r in range(1, nr + 1):
        rep = json.load(open('%s/b%d.r%d.json' % (d, b, r)))
        times = {g['name']: g['time_us'] for g in rep.get('groups', [])}
        for l in rep['layers']:
            name = l.get('group') or l['name']
            t = times.get(name, l.get('time_us'))
            if t is None:
                continue
            if name not in order:
                order.append(name)
            best[b][name] = min(best[b].get(name, t), t)
print('%-28s %10s' % ('layer', 'new us') + ('%10s %8s' % ('old us', 'new/old') if nb > 1 else ''))
for n in order:
    line = '%-28s %10.1f' % (n[:28], best[0].get(n, float('nan')))
    if nb > 1 and n in best[1]:
        line += '%10.1f %8.2f' % (best[1][n], best[0][n] / best[1][n])
    print(line)
PY
}
if [ "${1:-}" = --save ]; then
    report | tee "$here/results/window.txt"
else
    report
fi
