// bench/ort_run.js — ONNX Runtime's latency on one model, for bench/ort.sh.
//
//   node bench/ort_run.js MODEL.onnx INDIR REF.npy THREADS REPEAT CAP [PROFILE_PREFIX]
//
// Loads onnxruntime-node from $ORT_NODE_DIR (bench/ort.sh installs it there),
// opens MODEL.onnx with every graph optimization ('all'), the CPU execution
// provider, intraOpNumThreads = THREADS, interOpNumThreads = 1, sequential
// execution; feeds INDIR/NAME.npy to each input NAME; checks the first output
// against REF.npy (PyTorch's); runs warm-up runs (at least 2, until 1 s has
// passed, at most 10), then the median of REPEAT timed runs (fewer when
// they would take more than CAP seconds, at least 3), wall clock around
// session.run.  With PROFILE_PREFIX, ONNX Runtime's own profiler is on
// (enableProfiling) and its JSON trace is written as PREFIX_<date>.json.
// Prints one line:
//
//   ort-result threads=N median_ms=M cpu_ms=C runs=R err=E version=V
//
// E is max |ort - ref| / max |ref|; C is the process's CPU time (user and
// system, all its threads) over the timed runs, per run: on a machine so
// busy that few runs go unpreempted, at 1 thread the steadier measure of
// the work a run takes (bench/ort.sh's BENCH_CPU).
'use strict';
const fs = require('fs');
const path = require('path');

const dir = process.env.ORT_NODE_DIR || path.join(__dirname, 'node');
const ort = require(path.join(dir, 'node_modules', 'onnxruntime-node'));

function readNpy(file) {
    const buf = fs.readFileSync(file);
    if (buf.toString('latin1', 1, 6) !== 'NUMPY')
        throw new Error(file + ': not a .npy file');
    const major = buf[6];
    const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
    const start = (major === 1 ? 10 : 12) + hlen;
    const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
    const descr = /'descr':\s*'([^']*)'/.exec(header)[1];
    if (/'fortran_order':\s*True/.test(header))
        throw new Error(file + ': Fortran order is not supported');
    const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',')
        .map(s => s.trim()).filter(s => s.length).map(Number);
    const bytes = buf.subarray(start);
    const copy = new ArrayBuffer(bytes.length);
    new Uint8Array(copy).set(bytes);
    if (descr === '<f4')
        return new ort.Tensor('float32', new Float32Array(copy), shape);
    if (descr === '<i8')
        return new ort.Tensor('int64', new BigInt64Array(copy), shape);
    if (descr === '<i4')
        return new ort.Tensor('int32', new Int32Array(copy), shape);
    throw new Error(file + ': dtype ' + descr + ' is not supported');
}

function median(xs) {
    const s = xs.slice().sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main() {
    const [model, indir, ref, threadsArg, repeatArg, capArg, prof] = process.argv.slice(2);
    if (!capArg) {
        console.error('usage: node ort_run.js MODEL.onnx INDIR REF.npy THREADS REPEAT CAP [PROFILE_PREFIX]');
        process.exit(2);
    }
    const threads = Number(threadsArg), repeat = Number(repeatArg), cap = Number(capArg);
    const opts = {
        executionProviders: ['cpu'],
        graphOptimizationLevel: 'all',
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
    };
    if (prof) {
        opts.enableProfiling = true;
        opts.profileFilePrefix = prof;
    }
    const session = await ort.InferenceSession.create(model, opts);
    const feeds = {};
    for (const name of session.inputNames)
        feeds[name] = readNpy(path.join(indir, name + '.npy'));
    let out = await session.run(feeds);
    const got = out[session.outputNames[0]].data;
    const want = readNpy(ref).data;
    let maxRef = 0, maxDiff = 0;
    for (let i = 0; i < want.length; i++) {
        maxRef = Math.max(maxRef, Math.abs(want[i]));
        maxDiff = Math.max(maxDiff, Math.abs(got[i] - want[i]));
    }
    if (got.length !== want.length)
        maxDiff = Infinity;
    const now = () => Number(process.hrtime.bigint()) / 1e6;
    const start = now();
    let warm = 1, last = 0;
    while (warm < 2 || (warm < 10 && now() - start < 1000)) {
        const t0 = now();
        out = await session.run(feeds);
        last = now() - t0;
        warm++;
    }
    const runs = Math.max(Math.min(repeat, 3), Math.min(repeat, Math.floor(cap * 1000 / Math.max(last, 1e-6))));
    const times = [];
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < runs; i++) {
        const t0 = now();
        out = await session.run(feeds);
        times.push(now() - t0);
    }
    const cpu = process.cpuUsage(cpu0);   /* microseconds */
    if (prof)
        session.endProfiling();
    console.log('ort-result threads=%d median_ms=%s cpu_ms=%s runs=%d err=%s version=%s', threads,
                median(times).toFixed(3), ((cpu.user + cpu.system) / 1000 / runs).toFixed(3), runs, (maxDiff / (maxRef || 1)).toExponential(2),
                ort.env.versions ? ort.env.versions.common : '?');
}

main().catch(e => {
    console.error('ort_run.js: error: ' + (e && e.message ? e.message : e));
    process.exit(1);
});
