#!/usr/bin/env node
// Where the test command's time goes: `bash scripts/test.sh` run once, with every integration
// file's CPU counted, so that the next cut is made where the CPU is (issue 12: the whole command
// in 6 minutes on a 2-core machine that the five test clusters keep busy). Not a test: it prints
// figures, and the machine is noisy: compare runs of one sitting, not figures across days.
//   npx tsc -p tsconfig.json && node bench/test-cost.mjs [--out DIR] [--no-acct] [--tier=--all|--tier=--heavy]
// What it measures, beside the run:
//  - the machine: busy and idle CPU-s from /proc/stat over the whole command;
//  - the brokers: each container's cgroup CPU, sampled every second, summed per shard (its
//    cluster) and given to the file that shard was running then (or to its setup, which runs the
//    workshop part);
//  - the clients (as root, where Debian's `acct` is installed: `accton`): BSD process accounting
//    of every process that ends during the run; each one is given to the shard's file it ran
//    under (its ancestors lead to the shard's vitest process, its start time to the file);
//  - a calibration before the run: the CPU of `rabbitmq-diagnostics -q ping` in the first node
//    (an Erlang VM started and stopped: about 1 s of CPU on the day the 6:43 figure was taken),
//    so two days' machines can be told apart.
//  - every node process (NODE_OPTIONS --require bench/cpu-hook.cjs): what it ran and its CPU,
//    summed by command (`rmq-bench compare`, the vitest workers, tsc...): which commands the
//    client CPU goes to, which process accounting cannot tell (it keeps no arguments);
//  - the engine's container events over the run: node starts (each an Erlang VM and RabbitMQ
//    booting) and docker execs by command.
// The per-file lines come from test/timing-reporter.ts (RMQ_BENCH_TEST_TIMING).
import { execa } from 'execa';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { out: { type: 'string' }, 'no-acct': { type: 'boolean', default: false }, tier: { type: 'string', default: '' } } });
// scripts/test.sh's option: '' the default tier, --all both, --heavy the heavy one.
const testArgs = values.tier === '' ? [] : [values.tier];
const out = values.out ?? mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-test-cost-'));
mkdirSync(out, { recursive: true }); // --out may name a folder that does not exist yet
const timingFile = path.join(out, 'timing.log');
const acctFile = path.join(out, 'pacct');
const nodeCpuFile = path.join(out, 'node-cpu.jsonl');
const HOOK = path.join(ROOT, 'bench', 'cpu-hook.cjs');
const TICK_S = 0.01; // USER_HZ: /proc/stat and acct count in 1/100 s

/** Busy and idle CPU-s of the whole machine so far. */
function machineCpu() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = f;
  return { busy: (user + nice + system + irq + softirq + steal) * TICK_S, idle: (idle + iowait) * TICK_S };
}

/** Container id → its cgroup CPU file (v1 cpuacct or v2 cpu.stat) and how to read seconds from it. */
function containerCpuReader(id) {
  const v1 = `/sys/fs/cgroup/cpuacct/docker/${id}/cpuacct.usage`;
  if (existsSync(v1)) return () => Number(readFileSync(v1, 'utf8')) / 1e9;
  const v2 = `/sys/fs/cgroup/system.slice/docker-${id}.scope/cpu.stat`;
  if (existsSync(v2)) return () => Number(/usage_usec (\d+)/.exec(readFileSync(v2, 'utf8'))?.[1] ?? 0) / 1e6;
  return undefined;
}

/** Every second: each running container's CPU, as deltas, with the time. A restarted container starts from 0 again. */
function startBrokerSampler() {
  const samples = []; // { t, name, cpuS }
  const last = new Map(); // id -> seconds
  let names = new Map();
  let tick = 0;
  let stopped = false;
  const loop = async () => {
    while (!stopped) {
      if (tick++ % 5 === 0) {
        const r = await execa('docker', ['ps', '--no-trunc', '--format', '{{.ID}} {{.Names}}'], { reject: false });
        names = new Map(
          String(r.stdout)
            .split('\n')
            .filter(Boolean)
            .map((l) => l.split(' ')),
        );
      }
      const t = Date.now();
      for (const [id, name] of names) {
        const read = containerCpuReader(id);
        if (!read) continue;
        let now;
        try {
          now = read();
        } catch {
          continue; // gone between ps and read
        }
        const before = last.get(id);
        last.set(id, now);
        if (before !== undefined) samples.push({ t, name, cpuS: now >= before ? now - before : now });
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
  const done = loop();
  return {
    samples,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

/** comp_t: 13-bit mantissa, 3-bit base-8 exponent. */
const compT = (v) => (v & 0x1fff) << (3 * (v >> 13));

/** Linux acct v3 records (64 bytes each): comm, pid, ppid, start (s), CPU-s. */
function readAcct(file) {
  const b = readFileSync(file);
  const recs = [];
  for (let o = 0; o + 64 <= b.length; o += 64) {
    if (b[o + 1] !== 3) continue; // ac_version
    recs.push({
      pid: b.readUInt32LE(o + 16),
      ppid: b.readUInt32LE(o + 20),
      btime: b.readUInt32LE(o + 24),
      cpuS: (compT(b.readUInt16LE(o + 32)) + compT(b.readUInt16LE(o + 34))) * TICK_S,
      comm: b
        .subarray(o + 48, o + 64)
        .toString('latin1')
        .replace(/\0.*$/s, ''),
    });
  }
  return recs;
}

async function calibration() {
  const r = await execa('docker', ['exec', 'rabbit1', 'bash', '-c', 'TIMEFORMAT=%U+%S; time rabbitmq-diagnostics -q ping >/dev/null'], { reject: false });
  const m = /([\d.]+)\+([\d.]+)/.exec(String(r.stderr));
  return m ? Number(m[1]) + Number(m[2]) : null;
}

const shardOf = (container) => {
  const m = /^(rmq-bench-[a-z])-rabbit\d$/.exec(container);
  if (m) return m[1];
  return /^rabbit\d$/.test(container) ? 'rmq-bench' : null;
};

const cpuOrNa = (s) => (s === null ? 'n/a' : `${s.toFixed(2)} CPU-s`);

async function main() {
  const calibBefore = await calibration(); // n/a when no cluster is up yet: then only the one after
  // The hooks append: a folder an earlier run used (--out) would mix that run's lines into this one's.
  for (const f of [timingFile, nodeCpuFile]) writeFileSync(f, '');
  if (!values['no-acct']) writeFileSync(acctFile, ''); // accton only writes to a file that exists
  const acct =
    !values['no-acct'] && process.getuid?.() === 0 && (await execa('accton', [acctFile], { reject: false }).catch(() => ({ exitCode: 1 }))).exitCode === 0;
  if (!acct) process.stderr.write('test-cost: no process accounting (needs root and `accton` from Debian acct): brokers only\n');
  const sampler = startBrokerSampler();
  const events = watchEngineEvents();
  const m0 = machineCpu();
  const t0 = Date.now();
  let code;
  try {
    const r = await execa('bash', ['scripts/test.sh', ...testArgs], {
      cwd: ROOT,
      reject: false,
      stdin: 'ignore',
      stdout: 'inherit',
      stderr: 'inherit',
      env: {
        RMQ_BENCH_TEST_TIMING: timingFile,
        RMQ_BENCH_CPU_LOG: nodeCpuFile,
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${HOOK}`.trim(),
      },
    });
    code = r.exitCode;
  } finally {
    if (acct) await execa('accton', ['off'], { reject: false });
    await sampler.stop();
    events.end();
  }
  const wallS = (Date.now() - t0) / 1000;
  const m1 = machineCpu();
  const calibAfter = await calibration(); // the clusters stay up after the test command

  // Each shard's windows: its setup (vitest started → first file) and each file.
  const windows = new Map(); // cluster -> [{ from, to, file }]
  const vitestPid = new Map(); // pid -> cluster
  const open = new Map();
  for (const line of existsSync(timingFile) ? readFileSync(timingFile, 'utf8').split('\n').filter(Boolean) : []) {
    const [ms, event, cluster, file, pid] = line.split(' ');
    const t = Number(ms);
    vitestPid.set(Number(pid), cluster);
    if (!windows.has(cluster)) windows.set(cluster, []);
    if (event === 'init') open.set(`${cluster} setup`, t);
    else if (event === 'start') {
      const setupFrom = open.get(`${cluster} setup`);
      if (setupFrom !== undefined) {
        windows.get(cluster).push({ from: setupFrom, to: t, file: '(setup, workshop part)' });
        open.delete(`${cluster} setup`);
      }
      open.set(`${cluster} ${file}`, t);
    } else if (event === 'end') windows.get(cluster).push({ from: open.get(`${cluster} ${file}`) ?? t, to: t, file });
  }
  const rows = new Map(); // `${cluster} ${file}` -> { cluster, file, wallS, brokerS, clientS }
  const row = (cluster, file) => {
    const k = `${cluster} ${file}`;
    if (!rows.has(k)) rows.set(k, { cluster, file, wallS: 0, brokerS: 0, clientS: 0 });
    return rows.get(k);
  };
  for (const [cluster, ws] of windows) for (const w of ws) row(cluster, w.file).wallS += (w.to - w.from) / 1000;
  const fileAt = (cluster, t) => windows.get(cluster)?.find((w) => t >= w.from && t <= w.to + 1500)?.file ?? '(between files)';
  let brokersS = 0;
  for (const s of sampler.samples) {
    const cluster = shardOf(s.name);
    if (!cluster) continue;
    brokersS += s.cpuS;
    if (windows.has(cluster)) row(cluster, fileAt(cluster, s.t)).brokerS += s.cpuS;
  }
  let clientsS = 0;
  if (acct) {
    const recs = readAcct(acctFile);
    const byPid = new Map();
    for (const r of recs) {
      if (!byPid.has(r.pid)) byPid.set(r.pid, []);
      byPid.get(r.pid).push(r);
    }
    const parent = (r) =>
      (byPid.get(r.ppid) ?? []).filter((p) => p.btime <= r.btime + 1).sort((a, b) => b.btime - a.btime)[0] ??
      (vitestPid.has(r.ppid) ? { pid: r.ppid } : undefined);
    for (const r of recs) {
      if (r.comm.startsWith('erts_') || r.comm === 'beam.smp') continue; // inside the containers: counted above
      let p = r;
      for (let depth = 0; p && depth < 30 && !vitestPid.has(p.pid); depth++) p = parent(p);
      if (!p || !vitestPid.has(p.pid) || p === r) continue;
      const cluster = vitestPid.get(p.pid);
      clientsS += r.cpuS;
      row(cluster, fileAt(cluster, r.btime * 1000 + 500)).clientS += r.cpuS;
    }
  }

  const busy = m1.busy - m0.busy;
  const idle = m1.idle - m0.idle;
  const fmt = (n, w = 7, d = 1) => n.toFixed(d).padStart(w);
  const lines = [...rows.values()].sort((a, b) => a.cluster.localeCompare(b.cluster) || b.brokerS + b.clientS - (a.brokerS + a.clientS));
  process.stdout.write(`\ntest-cost: bash scripts/test.sh exited ${code} after ${fmt(wallS, 0)} s\n`);
  process.stdout.write(
    `machine: ${fmt(busy, 0)} CPU-s busy, ${fmt(idle, 0)} CPU-s idle (${((100 * busy) / (busy + idle)).toFixed(0)}% busy); ` +
      `brokers ${fmt(brokersS, 0)} CPU-s${acct ? `, the shards' client processes ${fmt(clientsS, 0)} CPU-s` : ''}; ` +
      `calibration (rabbitmq-diagnostics ping in rabbit1): before ${cpuOrNa(calibBefore)}, after ${cpuOrNa(calibAfter)}\n\n`,
  );
  process.stdout.write(
    `${'cluster'.padEnd(12)} ${'file'.padEnd(34)} ${'wall s'.padStart(7)} ${'broker'.padStart(7)} ${acct ? `${'client'.padStart(7)} ` : ''}(CPU-s)\n`,
  );
  for (const r of lines) {
    process.stdout.write(`${r.cluster.padEnd(12)} ${r.file.padEnd(34)} ${fmt(r.wallS)} ${fmt(r.brokerS)} ${acct ? `${fmt(r.clientS)} ` : ''}\n`);
  }
  printNodeCommands();
  await events.print();
  process.stdout.write(`\nfiles kept in ${out} (${readdirSync(out).join(', ')})\n`);
  process.exitCode = code;
}

/** What a node process ran, as a short name: `rmq-bench compare`, `rmq-bench cluster up`, `vitest worker`, `tsc`. */
function nodeCommand(argv) {
  const [script = '', ...args] = argv;
  const base = path.basename(script);
  if (base === 'rmq-bench.js' || base === 'rmq-bench') {
    const words = args.filter((a) => !a.startsWith('-'));
    const two = words[0] === 'cluster' || words[0] === 'dlq';
    return `rmq-bench ${words.slice(0, two ? 2 : 1).join(' ') || args[0] || ''}`.trim();
  }
  if (script.includes('vitest') && script.includes('workers')) return 'vitest worker';
  if (base === 'vitest' || base === 'vitest.mjs') return 'vitest';
  return base;
}

function printNodeCommands() {
  if (!existsSync(nodeCpuFile)) return;
  const byCommand = new Map();
  const byPath = new Map();
  let total = 0;
  let requests = 0;
  for (const line of readFileSync(nodeCpuFile, 'utf8').split('\n').filter(Boolean)) {
    const r = JSON.parse(line);
    const name = nodeCommand(r.argv);
    const c = byCommand.get(name) ?? { n: 0, cpuS: 0, requests: 0 };
    c.n++;
    c.cpuS += r.cpuS;
    total += r.cpuS;
    for (const [key, n] of Object.entries(r.requests ?? {})) {
      c.requests += n;
      requests += n;
      byPath.set(key, (byPath.get(key) ?? 0) + n);
    }
    byCommand.set(name, c);
  }
  process.stdout.write(`\nnode processes that exited normally, by what they ran: ${total.toFixed(1)} CPU-s, ${requests} HTTP requests (fetch)\n`);
  process.stdout.write(`${'CPU-s'.padStart(7)} ${'runs'.padStart(5)} ${'each'.padStart(6)} ${'fetches'.padStart(8)}  command\n`);
  for (const [name, c] of [...byCommand].sort((a, b) => b[1].cpuS - a[1].cpuS)) {
    process.stdout.write(
      `${c.cpuS.toFixed(1).padStart(7)} ${String(c.n).padStart(5)} ${(c.cpuS / c.n).toFixed(2).padStart(6)} ${String(c.requests).padStart(8)}  ${name}\n`,
    );
  }
  process.stdout.write('\nHTTP requests by method and path (the most frequent):\n');
  for (const [key, n] of [...byPath].sort((a, b) => b[1] - a[1]).slice(0, 15)) process.stdout.write(`${String(n).padStart(7)}  ${key}\n`);
}

/**
 * The engine's container events from now until end() (the engine keeps only its last 256
 * events, too few to ask for afterwards); print() prints them.
 */
function watchEngineEvents() {
  const proc = execa('docker', ['events', '--filter', 'type=container', '--format', '{{json .}}'], {
    reject: false,
    buffer: true,
  });
  return {
    end: () => proc.kill('SIGTERM'),
    print: async () => printEngineEvents(await proc),
  };
}

function printEngineEvents(r) {
  if (typeof r.stdout !== 'string' || r.stdout === '') return;
  // One JSON document a line (a command's newlines are escaped in it).
  const events = r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return null;
      }
    })
    .filter((e) => e && typeof e.Action === 'string');
  const count = (test) => events.filter(test).length;
  const execs = new Map();
  for (const e of events) {
    if (!e.Action.startsWith('exec_create: ')) continue;
    // The command's first two words; the erl_call script (sh -c SCRIPT erl_call node ...) by its name.
    const words = e.Action.slice('exec_create: '.length).split(/\s+/);
    const what = words[0] === 'sh' && words.includes('erl_call') ? 'erl_call' : words.slice(0, 2).join(' ').trim();
    execs.set(what, (execs.get(what) ?? 0) + 1);
  }
  process.stdout.write(
    `\nengine: ${count((e) => e.Action === 'start')} container starts, ${count((e) => e.Action === 'kill' && e.Actor?.Attributes?.signal === '9')} SIGKILLs, ` +
      `${count((e) => e.Action === 'stop')} stops, ${count((e) => e.Action === 'pause')} pauses; ` +
      `${[...execs.values()].reduce((a, n) => a + n, 0)} docker execs (${[...execs].map(([k, n]) => `${n} ${k}`).join(', ') || 'none'})\n`,
  );
}

await main();
