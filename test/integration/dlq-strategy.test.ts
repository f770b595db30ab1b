import { describe, expect, it } from 'vitest';
import type { DlxStrategyResult } from '../../src/scenarios/demos/dlx-strategy-plan.js';
import { mgmtGet, parseJson, runCli } from './cli.js';
import { distinct, witnessAt, newWitnessFile, witnessCommand, witnessLines } from './witness.js';

async function leftovers(): Promise<string[]> {
  const queues = (await mgmtGet<{ name: string }[]>('/api/queues?columns=name')).map((q) => q.name);
  const exchanges = (await mgmtGet<{ name: string }[]>('/api/exchanges?columns=name')).map((e) => e.name);
  return [...queues, ...exchanges].filter((n) => n.startsWith('rmq-bench.dlx-strategy.'));
}

// at-least-once under a kill, at-most-once under a pause. A pause long enough for the other nodes
// to elect a new leader (about 7 s here, some runs not within 8 s) holds at-least-once's dead
// letters for the worker's registration call to time out, 65 s after the first rejection
// (waitedOutRegistration; docs/COMMANDS.md, dlq-demo): measured there, not waited out here. A kill
// fails that call at once, and the dead letters came with the node's return (10 to 15 s).
describe("dlq-demo --strategy: dead letters while the DLQ's leader is faulted", { timeout: 300_000 }, () => {
  it('at-least-once (with reject-publish), the leader killed: every dead letter kept; nothing left behind', async () => {
    const out = await newWitnessFile();
    const r = await runCli(
      [
        'dlq-demo',
        '--strategy',
        'at-least-once',
        '--fault',
        'kill',
        '-n',
        '50',
        '--hold',
        '3s',
        '--checkpoint-cmd',
        witnessCommand(out, { peek: true }),
        '--auto',
        '--json',
      ],
      { timeoutMs: 290_000 },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const d = parseJson<DlxStrategyResult>(r);
    expect(d.ok, d.problems.join('\n')).toBe(true);
    expect(d.workerRetryMs).toBe(180_000);
    const [x] = d.runs;
    expect(x!.dlqLeader).not.toBe(x!.sourceLeader);
    expect([x!.rejected, x!.rejectedDuringFault]).toEqual([50, 50]);
    // Every dead letter reached the DLQ (the run waits for that): none counted kept while still in the source.
    expect(x!.inDlq).toBe(50);
    expect(x!.leftInSource).toBe(0);
    expect(x!.lost).toBe(0);
    // The DLQ as the broker held it before rmq-bench read it out (the tests' witness): all 50, rejected.
    const w = witnessAt(witnessLines(out), 'before-drain', 'at-least-once', 'rmq-bench.dlx-strategy.at-least-once.dlq');
    expect(w.ids!.length).toBe(w.messages);
    expect(distinct(w.ids!)).toBe(50);
    expect(new Set(w.firstDeathReasons)).toEqual(new Set(['rejected']));
    expect(x!.duplicatesInDlq).toBe(w.messages - 50);
    expect(x!.restoredAtMs! - x!.faultAtMs!).toBeGreaterThanOrEqual(3_000);
    // Killed, the leader is replaced at once, and stays a follower when it comes back.
    expect(x!.dlqLeaderAfter).not.toBeNull();
    expect(x!.dlqLeaderAfter).not.toBe(x!.dlqLeader);
    expect(x!.firstRejectedAtMs!).toBeGreaterThanOrEqual(x!.faultAtMs!);
    expect(d.netTicktimeS).toBe(60);
    expect(await leftovers()).toEqual([]);
  });

  it('at-most-once: the rejections all fell in the fault; nothing is left in the source and no dead letter was sent twice', async () => {
    const r = await runCli(['dlq-demo', '--strategy', 'at-most-once', '-n', '50', '--hold', '8s', '--auto', '--json'], { timeoutMs: 240_000 });
    expect(r.exitCode, r.stderr).toBe(0);
    const d = parseJson<DlxStrategyResult>(r);
    const [x] = d.runs;
    expect(d.fault).toBe('pause');
    expect(x!.dlqLeaderAfter).not.toBeNull();
    expect(x!.rejectedDuringFault).toBe(50);
    expect(x!.leftInSource).toBe(0);
    // At most once: a dead letter leaves once, so the DLQ holds no copies (what it lacks is the loss the demo reports).
    expect(x!.duplicatesInDlq).toBe(0);
    expect(x!.inDlq).toBeLessThanOrEqual(50);
    expect(x!.settledMs).not.toBeNull();
    expect(await leftovers()).toEqual([]);
  });

  it('bad input: a stray --hold without --strategy is one line, exit 2, before anything runs', async () => {
    const r = await runCli(['dlq-demo', '--hold', '5s']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual(['rmq-bench: --hold go(es) with --strategy (run rmq-bench dlq-demo --help)']);
  });
});
