// testsuite/random/ort_outputs.js — ONNX Runtime's outputs of models, for
// check_onnx_random.py.
//
//   node ort_outputs.js DIR...
//
// Loads onnxruntime-node from $ORT_NODE_DIR (node_modules/onnxruntime-node
// there; bench/ort.sh installs it).  For each DIR: opens DIR/model.onnx
// (graph optimizations off, so that ORT computes each node as the ONNX
// operator says, one thread), feeds DIR/in/NAME.npy to each input NAME and
// writes every output to DIR/ort/NAME.npy; when ORT refuses the model or
// fails to run it, writes its message to DIR/ort.err instead.  One process
// for many models: starting node and ORT costs more than a small model.
'use strict';
const fs = require('fs');
const path = require('path');

const dir = process.env.ORT_NODE_DIR || path.join(__dirname, '..', '..', 'bench', 'node');
const ort = require(path.join(dir, 'node_modules', 'onnxruntime-node'));

const NPY_TYPES = {
    '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
    '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array],
};

function readNpy(file) {
    const buf = fs.readFileSync(file);
    if (buf.toString('latin1', 1, 6) !== 'NUMPY')
        throw new Error(file + ': not a .npy file');
    const major = buf[6];
    const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
    const start = (major === 1 ? 10 : 12) + hlen;
    const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
    const descr = /'descr':\s*'([^']*)'/.exec(header)[1];
    const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',')
        .map(s => s.trim()).filter(s => s.length).map(Number);
    const t = NPY_TYPES[descr];
    if (!t) throw new Error(file + ': dtype ' + descr + ' is not supported');
    const bytes = buf.subarray(start);
    const copy = new ArrayBuffer(bytes.length);
    new Uint8Array(copy).set(bytes);
    return new ort.Tensor(t[0], new t[1](copy), shape);
}

function writeNpy(file, tensor) {
    const descr = Object.keys(NPY_TYPES).find(k => NPY_TYPES[k][0] === tensor.type);
    if (!descr) throw new Error('output type ' + tensor.type + ' is not supported');
    const dims = tensor.dims.map(String);
    const shape = '(' + dims.join(', ') + (dims.length === 1 ? ',' : '') + ')';
    let header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ', }';
    const pad = 64 - ((10 + header.length + 1) % 64);
    header += ' '.repeat(pad % 64) + '\n';
    const head = Buffer.alloc(10);
    head.write('\x93NUMPY', 0, 'latin1');
    head[6] = 1;
    head[7] = 0;
    head.writeUInt16LE(header.length, 8);
    const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
    fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), data]));
}

async function one(d) {
    const opts = {
        graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, interOpNumThreads: 1,
        executionMode: 'sequential',
    };
    const session = await ort.InferenceSession.create(path.join(d, 'model.onnx'), opts);
    const feeds = {};
    for (const name of session.inputNames)
        feeds[name] = readNpy(path.join(d, 'in', name + '.npy'));
    const results = await session.run(feeds);
    fs.mkdirSync(path.join(d, 'ort'), { recursive: true });
    for (const name of session.outputNames)
        writeNpy(path.join(d, 'ort', name + '.npy'), results[name]);
}

async function main() {
    for (const d of process.argv.slice(2)) {
        try {
            await one(d);
        } catch (e) {
            fs.writeFileSync(path.join(d, 'ort.err'), String(e && e.message || e) + '\n');
        }
    }
}

main();
