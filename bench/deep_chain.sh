#!/bin/bash
# bench/deep_chain.sh — compile time of long programs: N chained statements
# (t1[i] = t0[i] + 1, ... in one stage), `tec -O2 --emit=c`, for N = 1,000,
# 5,000 and 10,000: elapsed and user CPU seconds and peak memory, one run
# each (user CPU is the steadier measure on a loaded machine).
#
#   bench/deep_chain.sh [N...]                   (after make)
#   BASE=/path/to/other/tec bench/deep_chain.sh  (the same runs with another
#                                                 tec binary, side by side)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tec=${TEC:-$here/tec}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sizes=${*:-1000 5000 10000}
for n in $sizes; do
    {
        echo 'input x: f32[4]'
        echo 't0[i] = x[i] + 1'
        for ((k = 1; k < n; k++)); do echo "t$k[i] = t$((k - 1))[i] + 1"; done
        echo "y[i] = t$((n - 1))[i] * 2"
        echo 'output y'
    } >"$work/chain$n.te"
    for bin in ${BASE:+"$BASE"} "$tec"; do
        label=$([ "$bin" = "$tec" ] && echo this || echo base)
        /usr/bin/time -f "%e %U %M %x" -o "$work/time" "$bin" -O2 --emit=c "$work/chain$n.te" \
            >/dev/null 2>"$work/err"
        read -r el us kb rc < <(tail -1 "$work/time")
        status=ok
        [ "$rc" = 0 ] || status="failed (exit $rc)"
        grep -q '^Command terminated' "$work/time" && status="crashed ($(head -1 "$work/time"))"
        printf '%-5s N=%-6s %6.2f s elapsed %6.2f s user %8d KB  %s\n' "$label" "$n" "$el" "$us" \
            "$kb" "$status"
    done
done
