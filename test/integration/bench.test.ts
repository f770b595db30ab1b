import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { BenchModeResult, BenchResult } from '../../src/scenarios/traffic/bench.js';
import { eventually, MGMT, mgmtGet, parseJson, PASSWORD, ROOT, runCli, USER, withChannel } from './cli.js';
import { schemaChecked } from './schema.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-bench-'));
});

async function queueExists(name: string): Promise<boolean> {
  const res = await fetch(`${MGMT}/api/queues/%2F/${encodeURIComponent(name)}`, {
    headers: { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` },
    signal: AbortSignal.timeout(10_000),
  });
  return res.ok;
}

const sum = (r: BenchModeResult, k: 'published' | 'confirmed' | 'consumed'): number => r.samples.reduce((a, s) => a + s[k], 0);

describe('bench', { timeout: 180_000 }, () => {
  it('runs every mode and its counts add up: published = confirmed in the confirm modes, consumed = published', async () => {
    const csv = path.join(dir, 'samples.csv');
    const r = await runCli([
      'bench',
      '-C',
      '300',
      '-x',
      '2',
      '-y',
      '2',
      '--batch-size',
      '50',
      '--window',
      '16,64',
      '--multi-ack-every',
      '10',
      '--json',
      '--csv',
      csv,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const b = parseJson<BenchResult & { kind: string; schemaVersion: number }>(r);
    expect(b.kind).toBe('bench');
    expect(b.schemaVersion).toBe(1);
    expect(b.interrupted).toBe(false);
    expect(b.runs.map((x) => x.label)).toEqual(['none', 'tx/50', 'sync', 'batch/50', 'async/16', 'async/64']);
    for (const run of b.runs) {
      const what = `${run.label}: ${JSON.stringify({ ...run, samples: undefined })}`;
      expect(run.published, what).toBe(600); // 2 producers × -C 300
      expect(run.publishes, what).toBe(600);
      expect(run.stoppedBy, what).toBe('count');
      expect(run.gaveUp, what).toBeNull();
      if (run.mode === 'none') {
        expect(run.confirmed, what).toBe(0);
        expect(run.confirmLatency.count, what).toBe(0);
      } else {
        expect(run.confirmed, what).toBe(run.published);
        expect(run.nacked, what).toBe(0);
        expect(run.indeterminate, what).toBe(0);
        expect(run.confirmLatency.count, what).toBe(run.confirmed);
      }
      expect(run.consumed, what).toBe(run.published);
      expect(run.drained, what).toBe(true);
      expect(run.e2eLatency.count, what).toBe(run.consumed);
      // The per-second samples add up to the totals.
      expect(sum(run, 'published'), what).toBe(run.published);
      expect(sum(run, 'consumed'), what).toBe(run.consumed);
      expect(sum(run, 'confirmed'), what).toBe(run.confirmed);
      expect(run.cpuSeconds, what).toBeGreaterThan(0);
      expect(run.peakRssBytes, what).toBeGreaterThan(0);
      expect(run.queue, what).toMatch(/^bench-[a-z0-9]+-[a-z0-9]+$/);
      expect(await queueExists(run.queue), `${run.queue} deleted`).toBe(false);
    }
    // The table on stderr names every mode; the CSV has one row per sample, the same counts.
    expect(r.stderr).toMatch(/^\s+none\s+tx\/50\s+sync\s+batch\/50\s+async\/16\s+async\/64$/m);
    const rows = (await readFile(csv, 'utf8')).trimEnd().split('\n');
    const header = rows[0]!.split(',');
    const published = new Map<string, number>();
    for (const line of rows.slice(1)) {
      const cells = line.split(',');
      const mode = cells[header.indexOf('mode')]!;
      published.set(mode, (published.get(mode) ?? 0) + Number(cells[header.indexOf('published')]));
    }
    expect(Object.fromEntries(published)).toEqual(Object.fromEntries(b.runs.map((x) => [x.label, 600])));
    expect(rows.length - 1).toBe(b.runs.reduce((a, x) => a + x.samples.length, 0));
  });

  it('-z bounds each mode and --rate caps it; the open transaction and outstanding confirms still complete; no consumers', async () => {
    const seconds = 2;
    const rate = 100;
    const r = await runCli(['bench', '--confirm-mode', 'tx,batch,async', '--batch-size', '30', '-z', `${seconds}s`, '-r', String(rate), '-y', '0', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    const b = parseJson<BenchResult>(r);
    expect(b.runs.map((x) => x.label)).toEqual(['tx/30', 'batch/30', 'async/256']);
    for (const run of b.runs) {
      const what = `${run.label}: ${JSON.stringify({ ...run, samples: undefined })}`;
      expect(run.stoppedBy, what).toBe('time');
      expect(run.published, what).toBeGreaterThan(0);
      // The pacer lets at most one message through ahead of schedule.
      expect(run.published, what).toBeLessThanOrEqual(rate * seconds + 2);
      expect(run.confirmed, what).toBe(run.published);
      expect(run.consumers, what).toBe(0);
      expect(run.consumed, what).toBe(0);
      expect(run.drained, what).toBeNull();
      expect(await queueExists(run.queue), `${run.queue} deleted`).toBe(false);
    }
  });

  it('Ctrl+C: stops publishing, prints what was measured, deletes the queue, exit 130', async () => {
    const child = execa('node', [path.join(ROOT, 'bin', 'rmq-bench.js'), 'bench', '--confirm-mode', 'async,sync', '-z', '60s', '-r', '200', '--json'], {
      cwd: ROOT,
      env: { RMQ_BENCH_QUIET: '0' },
      reject: false,
      stdin: 'ignore',
      timeout: 120_000,
    });
    // Wait for the first per-second line: publishing is under way.
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        seen += String(chunk);
        if (/async\/256, time \d/.test(seen)) resolve();
      });
      void child.then(() => reject(new Error(`bench ended before its first sample:\n${seen}`)));
    });
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode, String(r.stderr)).toBe(130);
    const b = schemaChecked(JSON.parse(String(r.stdout))) as BenchResult;
    expect(b.interrupted).toBe(true);
    expect(b.runs.map((x) => x.label)).toEqual(['async/256']);
    const run = b.runs[0]!;
    expect(run.stoppedBy).toBe('interrupted');
    expect(run.published).toBeGreaterThan(0);
    expect(run.confirmed).toBeLessThanOrEqual(run.published);
    expect(run.samples.length).toBeGreaterThan(0);
    expect(String(r.stderr)).toContain('async/256: interrupted after');
    expect(await queueExists(run.queue)).toBe(false);
  });

  it('--metrics-port 0: a Prometheus scrape during the run parses, and its counts never pass what the run then reports', async () => {
    const child = execa(
      'node',
      [path.join(ROOT, 'bin', 'rmq-bench.js'), 'bench', '--confirm-mode', 'async', '-z', '6s', '-r', '300', '--metrics-port', '0', '--json'],
      {
        cwd: ROOT,
        env: { RMQ_BENCH_QUIET: '0' },
        reject: false,
        stdin: 'ignore',
        timeout: 120_000,
      },
    );
    // The exporter's address, from stderr.
    const url = await new Promise<string>((resolve, reject) => {
      let seen = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        seen += String(chunk);
        const m = /metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(seen);
        if (m) resolve(m[1]!);
      });
      void child.then(() => reject(new Error(`bench ended before its metrics address:\n${seen}`)));
    });
    // Scraped while publishing goes on, read by this test's own parser of the text format: every
    // line a comment (# HELP, # TYPE) or `name{labels} value`.
    const published = 'rmq_bench_published_messages_total{run="async/256"}';
    const scrape = async (): Promise<Map<string, number>> => {
      const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      expect(res.status).toBe(200);
      const lines = (await res.text()).split('\n').filter((l) => l !== '');
      const bad = lines.filter(
        (l) =>
          !/^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$/.test(l) &&
          !/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="[^"]*",?)*\})? -?[0-9.e+-]+$|^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? (NaN|[+-]Inf)$/.test(l),
      );
      expect(bad).toEqual([]);
      return new Map(lines.filter((l) => !l.startsWith('#')).map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]));
    };
    const during = await eventually(
      async () => {
        const m = await scrape();
        expect(m.get(published) ?? 0).toBeGreaterThan(0);
        return m;
      },
      30_000,
      250,
    );
    expect(during.get('rmq_bench_process_cpu_seconds_total')).toBeGreaterThan(0);
    expect([...during.keys()].some((k) => k.startsWith('rmq_bench_confirm_latency_seconds{run="async/256",quantile="0.99"}'))).toBe(true);
    const r = await child;
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const run = (schemaChecked(JSON.parse(String(r.stdout))) as BenchResult).runs[0]!;
    expect(during.get(published)!).toBeLessThanOrEqual(run.published);
    expect(during.get('rmq_bench_confirmed_messages_total{run="async/256"}') ?? 0).toBeLessThanOrEqual(run.confirmed);
    // The exporter closed with the run.
    await expect(fetch(url, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
  });

  it('--queues 3 -x 3 -y 3: three queues led by three nodes and a consumer on each (the broker says); counts add up; queues gone', {
    timeout: 20_000,
  }, async () => {
    const child = execa(
      'node',
      [path.join(ROOT, 'bin', 'rmq-bench.js'), 'bench', '--queues', '3', '-x', '3', '-y', '3', '-z', '3s', '--confirm-mode', 'async', '--json'],
      {
        cwd: ROOT,
        env: { RMQ_BENCH_QUIET: '0' },
        reject: false,
        stdin: 'ignore',
        timeout: 20_000,
      },
    );
    // The progress line once the queues exist and their members are online: 'publishing into bench-async256-k3x9q-1..3 (...)'.
    const stem = await new Promise<string>((resolve, reject) => {
      let seen = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        seen += String(chunk);
        const m = /async\/256: publishing into (bench-async256-[a-z0-9]+)-1\.\.3 /.exec(seen);
        if (m) resolve(m[1]!);
      });
      void child.then(() => reject(new Error(`bench ended before it named its queues:\n${seen}`)));
    });
    const names = [1, 2, 3].map((i) => `${stem}-${i}`);
    // While it runs, the broker's own view: each queue's leader and members (the management API), and
    // its consumers (a passive declare: the leader's live count; the API's consumer lists lag by seconds).
    const leaders = (
      await Promise.all(names.map((n) => mgmtGet<{ leader: string; members: string[]; online: string[] }>(`/api/queues/%2F/${encodeURIComponent(n)}`)))
    ).map((q) => ({ leader: q.leader, members: q.members.length, online: q.online.length }));
    expect(new Set(leaders.map((l) => l.leader)).size, JSON.stringify(leaders)).toBe(3);
    expect(leaders.map((l) => [l.members, l.online])).toEqual([
      [3, 3],
      [3, 3],
      [3, 3],
    ]);
    await eventually(async () => {
      const counts = await withChannel(async (ch) => Promise.all(names.map(async (n) => (await ch.checkQueue(n)).consumerCount)));
      expect(counts).toEqual([1, 1, 1]);
    }, 3_000);
    const r = await child;
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const b = schemaChecked(JSON.parse(String(r.stdout))) as BenchResult;
    expect(b.options.queues).toBe(3);
    const run = b.runs[0]!;
    const what = JSON.stringify({ ...run, samples: undefined });
    expect(run.queue).toBe(names[0]);
    expect(run.perQueue.map((q) => q.queue)).toEqual(names);
    expect(
      run.perQueue.map((q) => `rabbit@${q.leaderAtStart}`),
      what,
    ).toEqual(leaders.map((l) => l.leader));
    for (const q of run.perQueue) {
      expect([q.producers, q.consumers], what).toEqual([1, 1]);
      expect(q.published, what).toBeGreaterThan(0);
      expect(q.confirmed, what).toBe(q.published);
      expect(q.consumed, what).toBe(q.published);
      expect(q.confirmLatency.count, what).toBe(q.confirmed);
    }
    expect(
      run.perQueue.reduce((a, q) => a + q.published, 0),
      what,
    ).toBe(run.published);
    expect(
      run.perQueue.reduce((a, q) => a + q.consumed, 0),
      what,
    ).toBe(run.consumed);
    expect(run.drained, what).toBe(true);
    for (const n of names) expect(await queueExists(n), `${n} deleted`).toBe(false);
  });

  it('--csv where nothing can be written: one line, exit 2, before anything runs', async () => {
    const r = await runCli(['bench', '--confirm-mode', 'async', '-C', '10', '--csv', path.join(dir, 'no-such-dir', 'x.csv')]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    // Checked at parse time, as every output path is: one line, and no file or folder created.
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^rmq-bench: .*--csv.* does not exist or is not writable/)]);
    expect(existsSync(path.join(dir, 'no-such-dir'))).toBe(false);
  });

  it('--window without async: one line, exit 2', async () => {
    const r = await runCli(['bench', '--confirm-mode', 'sync', '--window', '64']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual(['rmq-bench: --window applies to async confirms: add async to --confirm-mode (run rmq-bench bench --help)']);
  });
});
