#!/usr/bin/env python3
"""bench/accel_reuse_ref.py: an element-level reference for the DRAM traffic
of tec's default (reuse-aware) model of an untiled GEMM layer, and what two
other buffers would read for the same demands.

For a GEMM C[M,N] = A[M,K] B[K,N] on an R x C array, it lists, fold by fold
in the order of doc/accel.md (3) (column folds outer, row folds inner), the
words each fold needs of each operand:

  os: fold (c, r) streams A rows r*R.. (all of K) and B columns c*C..
      (all of K); outputs stay in the PEs and are written once;
  ws: fold (c, r) holds B's block (K slice r, columns c) and streams A's
      K slice r for all M rows; it accumulates the M x C output block c;
  is: fold (c, r) holds A's block (K slice r, rows c) and streams B's K
      slice r for all N columns; it accumulates the C x N output block c.

and replays them through three buffers of B words (half the SRAM, the other
half being filled: double buffering):

  optimal      Belady's replacement (drop the word needed farthest in the
               future): the best any buffer managed by a controller that
               knows the schedule can do, Timeloop's assumption of an
               explicitly managed buffer taken to the word;
  lru          a cache of B words that evicts the least recently used;
  group        SCALE-Sim's read buffer in outline: it keeps the distinct
               words of its current group and forgets the whole group when
               B distinct words have come in (doc/accel.md, section 8).

Partial sums (ws, is): an output block of more than B words keeps B in the
buffer and spills the rest after every row fold but the last (written, then
read back), as tec assumes.

Prints, per layer and dataflow, tec's report (from --accel-report) next to
the three replays; with --check, exits 1 unless tec's numbers are at least
the optimal replay's and within 2% of them (on testsuite/accel/reuse_gemm.csv
they are equal, every operand and dataflow).  The partial sums are not
replayed: their spill is the rule stated above, the same as tec's.  Usage:

  accel_reuse_ref.py [--check] --tec TEC CONFIG.cfg TOPOLOGY.csv
(a CALC-mode config whose Dataflow is os, ws or is; an M,N,K topology).
"""
import collections
import csv
import math
import os
import subprocess
import sys
import tempfile


def demands(df, M, N, K, R, C):
    """Yields (fold, ifmap words, filter words) in fold order; words are
    (row, col) pairs of A and B."""
    if df == "os":
        fr, fc = math.ceil(M / R), math.ceil(N / C)
        for c in range(fc):
            cols = range(c * C, min(N, (c + 1) * C))
            for r in range(fr):
                rows = range(r * R, min(M, (r + 1) * R))
                yield [(i, k) for i in rows for k in range(K)], [(k, j) for k in range(K) for j in cols]
    elif df == "ws":
        fr, fc = math.ceil(K / R), math.ceil(N / C)
        for c in range(fc):
            cols = range(c * C, min(N, (c + 1) * C))
            for r in range(fr):
                ks = range(r * R, min(K, (r + 1) * R))
                yield [(i, k) for i in range(M) for k in ks], [(k, j) for k in ks for j in cols]
    else:
        fr, fc = math.ceil(K / R), math.ceil(M / C)
        for c in range(fc):
            rows = range(c * C, min(M, (c + 1) * C))
            for r in range(fr):
                ks = range(r * R, min(K, (r + 1) * R))
                yield [(i, k) for i in rows for k in ks], [(k, j) for k in ks for j in range(N)]


def optimal(seq, B):
    """Belady's replacement: on a miss with the buffer full, drop the word
    whose next use is farthest away (never used again first).  What a
    buffer managed by a controller that knows the schedule can do."""
    import heapq
    nxt, last = [0] * len(seq), {}
    for i in range(len(seq) - 1, -1, -1):
        nxt[i] = last.get(seq[i], math.inf)
        last[seq[i]] = i
    cache, heap, fetched = {}, [], 0
    for i, w in enumerate(seq):
        if w not in cache:
            fetched += 1
            if len(cache) >= B:
                while True:
                    far, v = heapq.heappop(heap)
                    if v in cache and cache[v] == -far:
                        del cache[v]
                        break
        cache[w] = nxt[i]
        heapq.heappush(heap, (-nxt[i], w))
    return fetched


def lru(seq, B):
    cache, fetched = collections.OrderedDict(), 0
    for w in seq:
        if w in cache:
            cache.move_to_end(w)
            continue
        fetched += 1
        cache[w] = True
        if len(cache) > B:
            cache.popitem(last=False)
    return fetched


def group(seq, B):
    held, fetched = set(), 0
    for w in seq:
        if w in held:
            continue
        fetched += 1
        held.add(w)
        if len(held) >= B:
            held = set()
    return fetched


def streams(df, M, N, K, R, C):
    """The stationary operand is fetched once per fold that holds it; the
    streamed ones are demanded word by word.  Returns the two demand
    sequences (held blocks appear once per fold, which is what they cost)."""
    a, b = [], []
    for fa, fb in demands(df, M, N, K, R, C):
        a.extend(fa)
        b.extend(fb)
    return a, b


def partial_sums(df, M, N, K, R, C, B):
    """ws, is: (reads back, extra writes) of the output blocks' spills."""
    if df == "os":
        return 0, 0
    fr = math.ceil(K / R)
    blocks = []
    if df == "ws":
        for c in range(math.ceil(N / C)):
            blocks.append(M * (min(N, (c + 1) * C) - c * C))
    else:
        for c in range(math.ceil(M / C)):
            blocks.append((min(M, (c + 1) * C) - c * C) * N)
    spill = sum((fr - 1) * max(0, blk - B) for blk in blocks)
    return spill, spill


def main():
    args = sys.argv[1:]
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    if len(args) != 4 or args[0] != "--tec":
        sys.exit(__doc__)
    tec, cfg, topo = args[1], args[2], args[3]
    conf = {}
    for line in open(cfg):
        if "=" in line and not line.lstrip().startswith((";", "#")):
            k, v = line.split("=", 1)
            conf[k.strip().lower()] = v.strip()
    R, C, df = int(conf["arrayheight"]), int(conf["arraywidth"]), conf["dataflow"].lower()
    half = {op: int(conf[op + "sramszkb"]) * 1024 // 2 for op in ("ifmap", "filter", "ofmap")}
    with tempfile.TemporaryDirectory() as tmp:
        rep = os.path.join(tmp, "r.csv")
        subprocess.run([tec, "--topology", topo, "--accel", cfg, "--accel-report=" + rep],
                       check=True, stdout=subprocess.DEVNULL)
        rows = {r["name"]: r for r in csv.DictReader(open(rep)) if r["kind"] == "gemm"}
    bad = 0
    print("%-6s %-3s %-12s %10s %10s %10s %10s" % ("layer", "df", "operand", "tec", "optimal",
                                                   "lru", "group"))
    for line in list(csv.reader(open(topo)))[1:]:
        if not line or not line[0].strip():
            continue
        name, M, N, K = line[0].strip(), int(line[1]), int(line[2]), int(line[3])
        a, b = streams(df, M, N, K, R, C)
        held = {"os": None, "ws": "filter", "is": "ifmap"}[df]
        ref = {}
        for op, seq in (("ifmap", a), ("filter", b)):
            B = half[op]
            if op == held:
                # a stationary block is fetched once, and not again
                n = len(set(seq))
                ref[op] = (n, n, n)
            else:
                ref[op] = (optimal(seq, B), lru(seq, B), group(seq, B))
        rd, extra = partial_sums(df, M, N, K, R, C, half["ofmap"])
        ref["ofmap reads"] = (rd,) * 3
        ref["ofmap writes"] = (M * N + extra,) * 3
        got = {"ifmap": int(rows[name]["dram_reads_ifmap"]),
               "filter": int(rows[name]["dram_reads_filter"]),
               "ofmap reads": int(rows[name]["dram_reads_ofmap"]),
               "ofmap writes": int(rows[name]["dram_writes_ofmap"])}
        for op in ("ifmap", "filter", "ofmap reads", "ofmap writes"):
            s, l, g = ref[op]
            off = got[op] < s or got[op] > s * 1.02
            mark = "  <- differs" if off else ""
            bad += off
            print("%-6s %-3s %-12s %10d %10d %10d %10d%s" % (name, df, op, got[op], s, l, g, mark))
    if check and bad:
        print("%d counts differ from the optimal replay" % bad)
        sys.exit(1)


if __name__ == "__main__":
    main()
