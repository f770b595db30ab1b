#!/usr/bin/env node
// Client CPU per message of rmq-bench's publisher against a bare client publishing the same
// messages (target: at most 1.2x over AMQP 0-9-1). Not a test: it prints figures. One invocation
// is one sitting: its rounds run the two side by side, one right after the other (alternating
// which goes first), so that each round's ratio compares runs made under the same load; the
// sitting's ratio is the median of its rounds' ratios. On a shared machine, compare ratios, not
// single figures, and read several sittings.
//   npm run build && node bench/cpu-ratio.mjs [--count 50000] [--rounds 5] [--window 256]
//       [--size 100] [--protocol amqp091|amqp10|both] [--url amqp://demo:demo@127.0.0.1:5672]
//       [--cpu-prof DIR]
// The cluster is the one rmq-bench's settings name: RMQ_BENCH_AMQP_PORT (its first node),
// RMQ_BENCH_USER and RMQ_BENCH_PASSWORD, as src/config.ts reads them (the default cluster when
// unset); both publishers connect to its first node. --url names another broker for both.
// Each run is its own process, with one fresh quorum queue and no consumer:
//   rmq-bench, 0-9-1: node bin/rmq-bench.js bench --confirm-mode async --window W -C N -x 1 -y 0 -s S --json
//   bare amqplib:     node bench/plain-amqplib.mjs --consumers 0 --count N --window W --size S --same-properties
//                     and the same with --reuse-headers (one headers object, as rmq-bench's publisher)
//   rmq-bench, 1.0:   the same bench command with --protocol amqp10
//   bare rhea:        node bench/plain-rhea.mjs --count N --window W --size S
// The bare clients put on each message what rmq-bench's bench publisher does (its message_id and
// publish-time header), so both do the same work on the wire. The measure is the same on both
// sides: process.cpuUsage() (user + system) from the first publish to the last confirm (1.0: the
// last outcome), over the messages published; connecting, declaring and closing are left out.
// That is what `rmq-bench bench` reports as cpuUsPerMessage.
// --cpu-prof DIR: every run under `node --cpu-prof --cpu-prof-dir DIR/<who>` (open a .cpuprofile
// in Chrome DevTools or speedscope); the CPU figures then include the profiler's overhead.
import { execa } from 'execa';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'rmq-bench.js');
const CPU_TARGET = 1.2;
/** One process may take this long at most. */
const RUN_TIMEOUT_MS = 300_000;

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '50000' },
    rounds: { type: 'string', default: '5' },
    window: { type: 'string', default: '256' },
    size: { type: 'string', default: '100' },
    protocol: { type: 'string', default: 'amqp091' },
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
const protocols = values.protocol === 'both' ? ['amqp091', 'amqp10'] : [values.protocol];
if (!protocols.every((p) => p === 'amqp091' || p === 'amqp10')) throw new Error(`--protocol ${values.protocol}: amqp091, amqp10 or both`);

/**
 * The bare clients of each protocol, the first the one the target is judged against. Over 0-9-1
 * also one that reuses its headers object as rmq-bench's publisher does (see plain-amqplib.mjs):
 * against it, the ratio is rmq-bench's own bookkeeping alone.
 */
const BARE = {
  amqp091: [
    { who: 'bare amqplib', script: 'plain-amqplib.mjs', args: ['--consumers', '0', '--same-properties'] },
    { who: 'bare amqplib, headers reused', script: 'plain-amqplib.mjs', args: ['--consumers', '0', '--same-properties', '--reuse-headers'] },
  ],
  amqp10: [{ who: 'bare rhea', script: 'plain-rhea.mjs', args: [] }],
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const log = (line = '') => process.stdout.write(`${line}\n`);
const nodeArgs = (who) => (profDir ? ['--cpu-prof', '--cpu-prof-dir', path.join(profDir, who.replace(/ /g, '-'))] : []);

/** One run of a side: its CPU per message and publish rate, or why it is left out. */
async function run(who, args, read) {
  const r = await execa('node', [...nodeArgs(who), ...args], {
    cwd: ROOT,
    env: { RMQ_BENCH_QUIET: '1' },
    reject: false,
    stdin: 'ignore',
    timeout: RUN_TIMEOUT_MS,
  });
  if (r.exitCode !== 0) return { who, failed: `exited ${r.exitCode}: ${r.stderr.trim().split('\n').pop()}` };
  const d = read(JSON.parse(r.stdout));
  // The cluster may be shared: a run whose counts do not add up is left out.
  if (d.published !== count || d.confirmed !== count) return { who, failed: `published ${d.published}, confirmed ${d.confirmed} of ${count}` };
  return { who, cpuUs: d.cpuUsPerMessage, rate: d.publishRatePerSec };
}

function ours(protocol) {
  const args = [
    BIN,
    'bench',
    '--protocol',
    protocol,
    '--confirm-mode',
    'async',
    '--window',
    window,
    '-C',
    String(count),
    '-x',
    '1',
    '-y',
    '0',
    '-s',
    size,
    ...benchUrls,
    '--json',
  ];
  return run('rmq-bench', args, (d) => d.runs[0]);
}

function bare(side) {
  const args = [path.join(ROOT, 'bench', side.script), '--count', String(count), '--window', window, '--size', size, '--url', url, ...side.args];
  return run(side.who, args, (d) => d);
}

const describe = (r) =>
  r.failed ? `FAILED (left out): ${r.failed}` : `CPU ${r.cpuUs.toFixed(2).padStart(6)} µs/msg  publish ${Math.round(r.rate).toString().padStart(6)} msg/s`;

log(
  `cpu-ratio: node ${process.version}, broker ${url.replace(/\/\/[^@]*@/, '//')}; async, window ${window}, ${count} messages of ${size} bytes, no consumer, ${rounds} rounds; CPU from the first publish to the last confirm`,
);
let missed = false;
for (const protocol of protocols) {
  const bares = BARE[protocol];
  const width = Math.max(...['rmq-bench', ...bares.map((b) => b.who)].map((w) => w.length));
  const sides = [{ who: 'rmq-bench', go: () => ours(protocol) }, ...bares.map((b) => ({ who: b.who, go: () => bare(b) }))];
  /** Per side, its good runs; per bare client, the rounds' ratios. */
  const good = Object.fromEntries(sides.map((x) => [x.who, []]));
  const ratios = Object.fromEntries(bares.map((b) => [b.who, []]));
  log(`${protocol === 'amqp10' ? 'AMQP 1.0' : 'AMQP 0-9-1'}: rmq-bench against ${bares.map((b) => b.who).join('; ')}`);
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? sides : [...sides].reverse();
    const results = {};
    for (const x of order) {
      const r = await x.go();
      results[x.who] = r;
      log(`  round ${i + 1} ${x.who.padEnd(width)}  ${describe(r)}`);
    }
    const o = results['rmq-bench'];
    if (!o.failed) good['rmq-bench'].push(o);
    for (const b of bares) {
      const r = results[b.who];
      if (r.failed) continue;
      good[b.who].push(r);
      if (o.failed) continue;
      ratios[b.who].push(o.cpuUs / r.cpuUs);
      log(`  round ${i + 1} ratio to ${b.who}: ${(o.cpuUs / r.cpuUs).toFixed(3)}`);
    }
  }
  const m = (who, k) => median(good[who].map((r) => r[k]));
  log(
    `  medians: ${sides
      .filter((x) => good[x.who].length > 0)
      .map((x) => `${x.who} ${m(x.who, 'cpuUs').toFixed(2)} µs/msg (${Math.round(m(x.who, 'rate'))} msg/s)`)
      .join('; ')}`,
  );
  for (const [j, b] of bares.entries()) {
    if (ratios[b.who].length === 0) {
      log(`  no round with rmq-bench and ${b.who} both good: no ratio`);
      if (j === 0) missed = true;
      continue;
    }
    const ratio = median(ratios[b.who]);
    const target = protocol === 'amqp091' && j === 0;
    if (target && ratio > CPU_TARGET) missed = true;
    log(
      `  sitting's ratio to ${b.who} (median of ${ratios[b.who].length} rounds): ${ratio.toFixed(3)}${target ? `  (target <= ${CPU_TARGET}: ${ratio <= CPU_TARGET ? 'met' : 'MISSED'})` : ''}`,
    );
  }
}
if (profDir) log(`profiles: ${profDir}/*/*.cpuprofile (CPU figures include the profiler)`);
process.exitCode = missed ? 1 : 0;
