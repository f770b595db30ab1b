#!/usr/bin/env node
// Refresh docs/WORKSHOP.md's output blocks: run every command of the walkthrough, in order,
// against the running cluster, and paste what each printed (its notes on stderr, then its report
// on stdout; progress off). Stops at the first command that fails, leaving the file untouched. Needs `npm run build`
// (for bin/rmq-bench.js; the parser, ./workshop.mjs, is plain JavaScript).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseWorkshop, replaceOutputs } from './workshop.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const file = path.join(root, 'docs', 'WORKSHOP.md');
const md = readFileSync(file, 'utf8');
const outputs = new Map();
for (const [i, block] of parseWorkshop(md).entries()) {
  const parts = [];
  for (const c of block.commands) {
    const started = Date.now();
    process.stderr.write(`workshop: ${c.section}: rmq-bench ${c.args.join(' ')}\n`);
    const r = spawnSync('node', [path.join(root, 'bin', 'rmq-bench.js'), ...c.args], {
      cwd: root,
      env: { ...process.env, RMQ_BENCH_QUIET: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    if (r.status !== 0) {
      process.stderr.write(`${r.stderr}\nworkshop: 'rmq-bench ${c.args.join(' ')}' exited ${r.status}; ${file} left as it was\n`);
      process.exit(r.status ?? 1);
    }
    parts.push(`$ rmq-bench ${c.args.join(' ')}\n${(r.stderr + r.stdout).trimEnd()}`);
    process.stderr.write(`workshop: done in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  }
  if (block.output) outputs.set(i, parts.join('\n\n'));
}
writeFileSync(file, replaceOutputs(md, outputs));
process.stderr.write(`workshop: ${file} updated\n`);
