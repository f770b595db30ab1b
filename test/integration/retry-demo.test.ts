import { describe, expect, it } from 'vitest';
import { mgmtGet, parseJson, runCli } from './cli.js';
import { WORKSHOP_TIMEOUT_MS, workshopDoc } from './workshop-run.js';

describe('retry-demo', { timeout: 120_000 }, () => {
  it("two failed attempts, each retried after demo.retry’s 5 s TTL, then processed once (the workshop's run)", { timeout: WORKSHOP_TIMEOUT_MS }, async () => {
    const d = await workshopDoc<{ ok: boolean; ttlMs: number; attempts: { gapMs: number | null; outcome: string; death?: string }[]; processedTimes: number }>(
      'retry-demo',
    );
    expect(d.ok).toBe(true);
    expect(d.ttlMs).toBe(5000);
    expect(d.attempts.map((a) => a.outcome)).toEqual(['nack-drop', 'nack-drop', 'processed']);
    for (const a of d.attempts.slice(1)) {
      expect(a.gapMs).toBeGreaterThanOrEqual(5000);
      expect(a.death).toContain('from demo.');
    }
    expect(d.processedTimes).toBe(1);
  });

  it('fails its verdict when the retry is slower than the tolerance allows (tolerance 0 and a 5 s TTL)', async () => {
    // A gap can never be exactly 5000 ms: with no tolerance the demo must flag it.
    const r = await runCli(['retry-demo', '--auto', '--failures', '1', '--tolerance', '0ms', '--json']);
    expect(r.exitCode).toBe(1);
    expect(parseJson<{ ok: boolean }>(r).ok).toBe(false);
    const bindings = await mgmtGet<{ destination: string }[]>('/api/exchanges/%2F/demo.dlx/bindings/source');
    expect(bindings.map((b) => b.destination)).toContain('demo.retry');
  });

  describe('--backoff: a ladder of retry queues that ends in demo.dlq', () => {
    interface LadderDoc {
      ok: boolean;
      mode: string;
      rungs: { queue: string; ttlMs: number }[];
      good: { messageId: string; failures: number; processedTimes: number };
      poison: { messageId: string; attempts: number; inDlq: boolean; dlqRoutingKey: string };
      attempts: { messageId: string; attempt: number; gapMs: number | null; routingKey: string; earlierAttempts: number; outcome: string }[];
      problems: string[];
    }

    /** What a ladder run must show, by its own counts: the rungs' TTLs, the good message processed once, the poison one up every rung and into demo.dlq. */
    function ladderHolds(d: LadderDoc, ttlsMs: number[]): void {
      expect(d.ok, d.problems.join('\n')).toBe(true);
      expect(d.mode).toBe('ladder');
      expect(d.rungs.map((x) => x.ttlMs)).toEqual(ttlsMs);
      expect(d.good).toMatchObject({ failures: 2, processedTimes: 1 });
      const poison = d.attempts.filter((a) => a.messageId === d.poison.messageId);
      const rungs = ttlsMs.length + 1;
      expect(poison.map((a) => [a.attempt, a.routingKey, a.earlierAttempts, a.outcome])).toEqual(
        Array.from({ length: rungs }, (_, i) => [i + 1, `attempt-${i + 1}`, i, 'failed']),
      );
      expect(poison.slice(1).map((a, i) => a.gapMs! >= d.rungs[i]!.ttlMs)).toEqual(ttlsMs.map(() => true));
      expect(d.poison).toMatchObject({ attempts: rungs, inDlq: true, dlqRoutingKey: `attempt-${rungs}` });
    }

    it("the workshop's ladder (5s,30s,5m at a twentieth): each rung's TTL, the good message processed once, the poison one in demo.dlq", {
      timeout: WORKSHOP_TIMEOUT_MS,
    }, async () => {
      ladderHolds(await workshopDoc<LadderDoc>('retry-demo --backoff 5s,30s,5m --time-scale 0.05'), [250, 1500, 15_000]);
    });

    it('each rung holds the message for its TTL; the good message is processed once; the poison one climbs every rung and lands in demo.dlq', async () => {
      const r = await runCli(['retry-demo', '--backoff', '1s,2s,3s', '--time-scale', '0.5', '--auto', '--json']);
      expect(r.exitCode, r.stderr).toBe(0);
      const d = parseJson<LadderDoc>(r);
      ladderHolds(d, [500, 1000, 1500]);
      // The ladder is removed; demo.dlq keeps the poison message for dlq inspect.
      const queues = (await mgmtGet<{ name: string }[]>('/api/queues')).map((q) => q.name);
      expect(queues.filter((q) => q.startsWith('demo.backoff'))).toEqual([]);
      const inspect = await runCli(['dlq', 'inspect', '--json']);
      expect(inspect.exitCode, inspect.stderr).toBe(0);
      const rows = parseJson<{ rows: { messageId: string; reason: string; sourceQueue: string }[] }>(inspect).rows;
      expect(rows.find((x) => x.messageId === d.poison.messageId)).toMatchObject({ reason: 'rejected', sourceQueue: 'demo.backoff.orders' });
    });

    it('a tolerance of 0 fails the verdict (no rung expires to the millisecond)', async () => {
      const r = await runCli(['retry-demo', '--backoff', '300ms,300ms', '--failures', '1', '--tolerance', '0ms', '--auto', '--json']);
      expect(r.exitCode).toBe(1);
      expect(parseJson<LadderDoc>(r).ok).toBe(false);
    });
  });
});
