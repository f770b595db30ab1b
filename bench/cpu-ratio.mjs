#!/usr/bin/env node
// Client CPU per message of rmq-bench's publisher against a plain amqplib publisher doing the same
// work (issue 12's target: at most 1.2x). Not a test: it prints figures. Machines here are noisy:
// the rounds alternate which goes first, and the medians are compared.
//   npx tsc -p tsconfig.json && node bench/cpu-ratio.mjs [--count 50000] [--rounds 3] [--window 256]
//       [--size 100] [--url amqp://demo:demo@127.0.0.1:5672] [--cpu-prof DIR]
// The cluster is the one rmq-bench's settings name: RMQ_BENCH_AMQP_PORT (its first node),
// RMQ_BENCH_USER and RMQ_BENCH_PASSWORD, as src/config.ts reads them (the default cluster when
// unset); both publishers connect to its first node. --url names another broker for both.
// Each round, each its own process, one fresh quorum queue each, no consumer:
//   rmq-bench:     node bin/rmq-bench.js bench --mode async --window W -C N -x 1 -y 0 -s S --json
//   plain amqplib: node bench/plain-amqplib.mjs --consumers 0 --count N --window W --size S [--same-properties]
// The plain script runs twice a round: with only its publish-time header, and with the same
// properties as rmq-bench's (message_id and header name): the target is judged against the latter.
// Both take process.cpuUsage() (user + system) over the run and divide by the messages published.
// --cpu-prof DIR: rmq-bench runs under `node --cpu-prof --cpu-prof-dir DIR` (open the .cpuprofile
// in Chrome DevTools or speedscope); its CPU figures then include the profiler's overhead.
import { execa } from 'execa';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'rmq-bench.js');
const PLAIN = path.join(ROOT, 'bench', 'plain-amqplib.mjs');
const CPU_TARGET = 1.2;
const SAME = 'plain, same properties';
const WHO_WIDTH = SAME.length;
/** One process may take this long at most. */
const RUN_TIMEOUT_MS = 300_000;

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '50000' },
    rounds: { type: 'string', default: '3' },
    window: { type: 'string', default: '256' },
    size: { type: 'string', default: '100' },
    url: { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
});
const env = process.env;
const url = values.url ?? `amqp://${env.RMQ_BENCH_USER || 'demo'}:${env.RMQ_BENCH_PASSWORD || 'demo'}@127.0.0.1:${env.RMQ_BENCH_AMQP_PORT || '5672'}`;
/** rmq-bench reads the cluster from the same variables; --url is passed on to it only when given. */
const benchUrls = values.url === undefined ? [] : ['--urls', values.url];
const count = Number(values.count);
const rounds = Number(values.rounds);
const { window, size } = values;
const profDir = values['cpu-prof'];

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const log = (line = '') => process.stdout.write(`${line}\n`);

async function ours() {
  const node = profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [];
  const args = [...node, BIN, 'bench', '--mode', 'async', '--window', window, '-C', String(count), '-x', '1', '-y', '0', '-s', size, ...benchUrls, '--json'];
  const r = await execa('node', args, { cwd: ROOT, env: { RMQ_BENCH_QUIET: '1' }, reject: false, stdin: 'ignore', timeout: RUN_TIMEOUT_MS });
  if (r.exitCode !== 0) throw new Error(`rmq-bench bench exited ${r.exitCode}: ${r.stderr.trim().split('\n').pop()}`);
  const run = JSON.parse(r.stdout).runs[0];
  return { who: 'rmq-bench', ok: run.published === count && run.confirmed === count, rate: run.publishRatePerSec, cpuUs: run.cpuUsPerMessage };
}

async function plain(sameProperties = false) {
  const args = [
    PLAIN,
    '--consumers',
    '0',
    '--count',
    String(count),
    '--window',
    window,
    '--size',
    size,
    '--url',
    url,
    ...(sameProperties ? ['--same-properties'] : []),
  ];
  const r = await execa('node', args, { cwd: ROOT, reject: false, stdin: 'ignore', timeout: RUN_TIMEOUT_MS });
  if (r.exitCode !== 0) throw new Error(`plain-amqplib exited ${r.exitCode}: ${r.stderr.trim().split('\n').pop()}`);
  const d = JSON.parse(r.stdout);
  return {
    who: sameProperties ? SAME : 'plain amqplib',
    ok: d.published === count && d.confirmed === count,
    rate: d.publishRatePerSec,
    cpuUs: d.cpuUsPerMessage,
  };
}

log(
  `cpu-ratio: ${new Date().toISOString()}, node ${process.version}, broker ${url.replace(/\/\/[^@]*@/, '//')}; async confirms, window ${window}, ${count} messages of ${size} bytes, no consumer, ${rounds} rounds`,
);
const results = { 'rmq-bench': [], 'plain amqplib': [], [SAME]: [] };
const plainSame = () => plain(true);
for (let i = 0; i < rounds; i++) {
  const order = i % 2 === 0 ? [ours, plain, plainSame] : [plainSame, plain, ours];
  for (const f of order) {
    // The cluster is shared (others restart nodes): a failed run or one whose counts do not add up is left out.
    const r = await f().catch((err) => ({ who: f === ours ? 'rmq-bench' : f === plain ? 'plain amqplib' : SAME, failed: err.message }));
    if (r.failed) {
      log(`round ${i + 1} ${r.who.padEnd(WHO_WIDTH)}  FAILED (left out): ${r.failed}`);
      continue;
    }
    if (r.ok) results[r.who].push(r);
    log(
      `round ${i + 1} ${r.who.padEnd(WHO_WIDTH)}  CPU ${r.cpuUs.toFixed(2).padStart(6)} µs/msg  publish ${Math.round(r.rate).toString().padStart(6)} msg/s${r.ok ? '' : '  COUNTS DO NOT ADD UP (left out)'}`,
    );
  }
}
if (Object.values(results).some((rs) => rs.length === 0)) {
  log('not enough good runs for a ratio');
  process.exit(1);
}
const med = (who, k) => median(results[who].map((r) => r[k]));
const describe = (who) => `${who} ${med(who, 'cpuUs').toFixed(2)} µs/msg (${Math.round(med(who, 'rate'))} msg/s)`;
log(`medians: ${Object.keys(results).map(describe).join('; ')}`);
// The target is judged against the plain script doing the same work: the same properties on every message.
const ratioSame = med('rmq-bench', 'cpuUs') / med(SAME, 'cpuUs');
const ratioBare = med('rmq-bench', 'cpuUs') / med('plain amqplib', 'cpuUs');
log(
  `CPU per message ratio, rmq-bench / plain with the same properties: ${ratioSame.toFixed(3)}  (target <= ${CPU_TARGET}: ${ratioSame <= CPU_TARGET ? 'met' : 'MISSED'})`,
);
log(`CPU per message ratio, rmq-bench / plain with only the publish-time header: ${ratioBare.toFixed(3)}`);
if (profDir) log(`profiles of rmq-bench: ${profDir}/*.cpuprofile (CPU figures include the profiler)`);
