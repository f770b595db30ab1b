import { execa } from 'execa';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { parseJson, ROOT, runCli, uniqueName, withChannel } from './cli.js';

const BIN = path.join(ROOT, 'bin', 'rmq-bench.js');

interface OutboxJson {
  runId: string;
  count: number;
  atStart: { written: number; pending: number; published: number };
  atEnd: { written: number; pending: number; published: number };
  completed: boolean;
}

const queue = uniqueName('outbox');
/** Events a second the killed producers write: the relay keeps up, so a kill at 700 published lands before 1,200 are written. */
const WRITE_RATE = 300;
let dir: string;

/** Start `producer --outbox` and SIGKILL it once it reports `at >= n` (rows published); resolves with the last position it printed. */
async function killProducerAt(file: string, n: number, count: number): Promise<number> {
  // Paced: unpaced, the writer can commit every event before the relay has published 700
  // (seen under two busy clusters), and the kills would no longer land mid-write.
  const child = execa(
    'node',
    [BIN, 'producer', '--outbox', file, '-n', String(count), '-r', String(WRITE_RATE), '--queue', queue, '--exchange', '', '--progress-lines'],
    {
      cwd: ROOT,
      reject: false,
      stdin: 'ignore',
      env: { RMQ_BENCH_QUIET: '1' },
      timeout: 120_000,
    },
  );
  let last = -1;
  child.stdout?.on('data', (chunk: Buffer | string) => {
    for (const line of String(chunk).split('\n')) {
      const m = /^at (\d+)$/.exec(line);
      if (!m) continue;
      last = Math.max(last, Number(m[1]));
      if (last >= n) child.kill('SIGKILL');
    }
  });
  const r = await child;
  expect(r.signal, `the producer finished before it was killed: ${String(r.stderr)}`).toBe('SIGKILL');
  return last;
}

/** Everything in the queue, by message id (a count per id). */
async function drain(): Promise<Map<string, number>> {
  return withChannel(async (ch) => {
    const seen = new Map<string, number>();
    for (let idle = 0; idle < 10; ) {
      const m = await ch.get(queue, { noAck: true });
      if (!m) {
        idle++;
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      idle = 0;
      const id = String(m.properties.messageId);
      seen.set(id, (seen.get(id) ?? 0) + 1);
    }
    return seen;
  });
}

/** The file's rows, read with this test's own SQL (not src/store's): each seq and its state. */
function readRows(file: string): { seq: number; state: string }[] {
  const db = new Database(file, { readonly: true });
  try {
    expect((db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check)).toEqual(['ok']);
    return db.prepare('SELECT seq, state FROM outbox ORDER BY seq').all() as { seq: number; state: string }[];
  } finally {
    db.close();
  }
}

/** The stored rows: contiguous sequences from 0, each pending or published; integrity ok. */
function checkFile(file: string): { written: number; pending: number; published: number } {
  const states = readRows(file);
  expect(states.map((s) => s.seq)).toEqual(states.map((_, i) => i));
  expect(states.filter((s) => s.state !== 'pending' && s.state !== 'published')).toEqual([]);
  const pending = states.filter((s) => s.state === 'pending').length;
  return { written: states.length, pending, published: states.length - pending };
}

describe('producer --outbox: the outbox file across kills', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-it-outbox-'));
    await withChannel((ch) => ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } }));
  });
  afterAll(async () => {
    await withChannel((ch) => ch.deleteQueue(queue)).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  it('survives SIGKILLs mid-write and a kill inside an open transaction (WAL: no corrupt state); the same command resumes and every event arrives', async () => {
    const file = path.join(dir, 'kills.sqlite');
    const count = 1_200;
    // 1. The real producer, killed three times while it writes (one fsync'd commit per event) and publishes.
    let before = { written: 0, pending: 0, published: 0 };
    for (const at of [100, 400, 700]) {
      const reached = await killProducerAt(file, at, count);
      expect(reached).toBeGreaterThanOrEqual(at);
      const now = checkFile(file);
      expect(now.written).toBeGreaterThanOrEqual(before.written);
      expect(now.published).toBeGreaterThanOrEqual(before.published);
      expect(now.written).toBeLessThan(count);
      before = now;
    }

    // 2. A writer SIGKILLed inside a transaction: BEGIN, an insert and a mark, no COMMIT.
    const script = `
      import Database from 'better-sqlite3';
      const db = new Database(${JSON.stringify(file)});
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      // A tiny page cache: the transaction's dirty pages spill into the WAL before any commit.
      db.pragma('cache_size = 1');
      const next = db.prepare('SELECT MAX(seq) + 1 AS n FROM outbox').get().n;
      const pending = db.prepare("SELECT seq FROM outbox WHERE state = 'pending' ORDER BY seq LIMIT 1").get();
      db.exec('BEGIN IMMEDIATE');
      db.prepare("INSERT INTO outbox (seq, id, payload, state, created_at) VALUES (?, 'half-written', x'00', 'pending', 0)").run(next);
      if (pending) db.prepare("UPDATE outbox SET state = 'published' WHERE seq = ?").run(pending.seq);
      // Make the WAL hold uncommitted pages, then wait to be killed.
      db.prepare("INSERT INTO outbox_meta (key, value) VALUES ('junk', zeroblob(200000))").run();
      process.stdout.write('in-tx ' + next + ' ' + (pending ? pending.seq : -1) + '\\n');
      setInterval(() => {}, 1000);
    `;
    const writer = execa('node', ['--input-type=module', '-e', script], { cwd: ROOT, reject: false, stdin: 'ignore', timeout: 60_000 });
    const inTx = await new Promise<string>((resolve, reject) => {
      writer.stdout?.on('data', (c: Buffer | string) => {
        const line = String(c);
        if (line.startsWith('in-tx')) resolve(line.trim());
      });
      void writer.then((r) => reject(new Error(`the writer exited before its transaction: ${String(r.stderr)}`)));
    });
    writer.kill('SIGKILL');
    expect((await writer).signal).toBe('SIGKILL');
    const [, insertedSeq, markedSeq] = inTx.split(' ').map(Number);
    const afterTx = checkFile(file);
    // Nothing of the transaction survived: no new row, the marked row still pending.
    expect(afterTx).toEqual(before);
    const states = new Map(readRows(file).map((s) => [s.seq, s.state]));
    expect(states.has(insertedSeq!)).toBe(false);
    if (markedSeq! >= 0) expect(states.get(markedSeq!)).toBe('pending');

    // 3. The same command resumes from the pending rows and completes.
    const r = await runCli(['producer', '--outbox', file, '-n', String(count), '-r', '0', '--queue', queue, '--exchange', '', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    const done = parseJson<OutboxJson>(r);
    expect(done.completed).toBe(true);
    expect(done.atStart).toEqual(before);
    expect(done.atEnd).toEqual({ written: count, pending: 0, published: count });

    // 4. Every event is in the queue, under its id; kills may have duplicated a few, never lost one.
    const seen = await drain();
    const expected = Array.from({ length: count }, (_, seq) => `${done.runId}-${seq}`);
    expect(expected.filter((id) => !seen.has(id))).toEqual([]);
    expect([...seen.keys()].filter((id) => !expected.includes(id))).toEqual([]);
  });

  it('an outbox made for another event count: one line, exit 65', async () => {
    const file = path.join(dir, 'small.sqlite');
    const first = await runCli(['producer', '--outbox', file, '-n', '5', '-r', '0', '--queue', queue, '--exchange', '']);
    expect(first.exitCode, first.stderr).toBe(0);
    const r = await runCli(['producer', '--outbox', file, '-n', '6', '--queue', queue, '--exchange', '']);
    expect(r.exitCode).toBe(65);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('holds a run of 5 events, not 6');
    await drain();
  });
});
