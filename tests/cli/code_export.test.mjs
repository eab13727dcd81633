// The exported NumPy program, run for real under Python, against the app's own numbers
// (`attention_cli compute` on the same problem). Not a test of the PyTorch program: torch is optional.
// Needs Debian's /usr/bin/python3 with python3-numpy, and the CLI (ATTN_CLI, default build/native).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = path.resolve(repoRoot, process.env.ATTN_CLI ?? 'build/native/attention_cli');
const python = '/usr/bin/python3';  // not the pyenv python3 on PATH: it has no NumPy
const tolerance = 1e-4;              // absolute; the program prints 4 decimals

function run(command, args, input) {
  const r = spawnSync(command, args, { input, encoding: 'utf8' });
  if (r.error) throw new Error(`${command}: ${r.error.message}`);
  return r;
}

function cliOk(args, input) {
  const r = run(cli, args, input);
  assert.equal(r.status, 0, `attention_cli ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

// "weights" then rows, "output" then rows: numbers separated by single spaces.
function parsePrinted(text) {
  const blocks = {};
  let current = null;
  for (const line of text.trim().split('\n')) {
    if (line === 'weights' || line === 'output') blocks[(current = line)] = [];
    else blocks[current].push(line.split(' ').map(Number));
  }
  return blocks;
}

function maxAbsDiff(a, b) {
  assert.equal(a.length, b.length, 'row count');
  let worst = 0;
  a.forEach((row, i) => {
    assert.equal(row.length, b[i].length, `row ${i} length`);
    row.forEach((v, j) => { worst = Math.max(worst, Math.abs(v - b[i][j])); });
  });
  return worst;
}

// Runs the generated program and the app's computation for the same flags.
function bothWays(flags) {
  const code = cliOk(['code', '--lang', 'numpy', ...flags]);
  const py = run(python, ['-'], code);
  assert.equal(py.status, 0, `the generated program failed under Python:\n${py.stderr}`);
  const printed = parsePrinted(py.stdout);
  const request = JSON.parse(cliOk(['code', '--json-input', ...flags]));
  const app = JSON.parse(cliOk(['compute'], JSON.stringify({ ...request, backend: 'scalar' })));
  return { printed, app };
}

const settings = [
  ['the lesson sentence', []],
  ['causal', ['--causal']],
  ['no scaling', ['--no-scale']],
  ['temperature 2', ['--temperature', '2']],
  ['cross-attention', ['--sentence', 'it was tired', '--kv-sentence', 'The dog slept under a tree']],
  ['cross-attention, causal, unknown words', ['--sentence', 'the zebrafish sang loudly', '--kv-sentence', 'a fox',
    '--causal', '--temperature', '0.5']],
];

for (const [name, flags] of settings) {
  test(`numpy program matches the app: ${name}`, () => {
    const { printed, app } = bothWays(flags);
    assert.ok(maxAbsDiff(printed.weights, app.weights) <= tolerance, 'weights differ');
    assert.ok(maxAbsDiff(printed.output, app.output) <= tolerance, 'output differs');
  });
}

test('numpy program prints the lesson numbers worked out by hand', () => {
  // "it" (row 7) scores 6 against "animal", 2 against "street", 0 against the other 8 keys;
  // divided by √4: 3, 1, 0 → softmax gives e³ / (e³ + e + 8) = 0.6520 to "animal".
  const { printed } = bothWays([]);
  assert.ok(Math.abs(printed.weights[7][1] - 0.6520) <= tolerance, `got ${printed.weights[7][1]}`);
  assert.ok(Math.abs(printed.weights[7][5] - 0.0882) <= tolerance, `got ${printed.weights[7][5]}`);
  // causal: the first token can only see itself.
  const causal = bothWays(['--causal']).printed;
  assert.deepEqual(causal.weights[0], [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
});

test('the settings reach the code', () => {
  const numpy = (flags) => cliOk(['code', '--lang', 'numpy', ...flags]);
  assert.doesNotMatch(numpy([]), /-np\.inf/);
  assert.match(numpy(['--causal']), /scores\[future\] = -np\.inf/);
  assert.match(numpy([]), /np\.sqrt\(d\)/);
  assert.doesNotMatch(numpy(['--no-scale']), /np\.sqrt/);
  assert.match(numpy(['--temperature', '2']), /^temperature = 2$/m);
});

test('torch code is printed too (not run: PyTorch is optional)', () => {
  const code = cliOk(['code', '--lang', 'torch']);
  assert.match(code, /^import torch$/m);
  assert.match(code, /torch\.softmax\(scores, dim=-1\)/);
});

test('bad flags: exit 2 and one line on stderr, nothing on stdout', () => {
  for (const args of [['--lang', 'julia'], [], ['--lang', 'numpy', '--json-input'], ['--lang', 'numpy', '--frobnicate'],
    ['--lang', 'numpy', '--temperature', 'hot'], ['--lang', 'numpy', '--temperature', '0'],
    ['--lang', 'numpy', '--sentence', '   ']]) {
    const r = run(cli, ['code', ...args]);
    assert.equal(r.status, 2, `code ${args.join(' ')}: exit ${r.status}`);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});
