import { execa } from 'execa';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ConsumerTimeoutDemoResult } from '../../src/scenarios/consumer-timeout-plan.js';
import { ROOT, eventually, mgmtGet } from './cli.js';
import { WORKSHOP_TIMEOUT_MS, workshopDoc } from './workshop-run.js';

type Doc = ConsumerTimeoutDemoResult;

const TEMP_POLICY = 'rmq-bench-consumer-timeout-demo';

async function leftovers(): Promise<{ queues: string[]; policies: string[] }> {
  const queues = (await mgmtGet<{ name: string }[]>('/api/queues?columns=name')).map((q) => q.name).filter((n) => n.startsWith('rmq-bench.consumer-timeout.'));
  const policies = (await mgmtGet<{ name: string }[]>('/api/policies')).map((p) => p.name).filter((n) => n === TEMP_POLICY);
  return { queues, policies };
}

describe('consumer-timeout-demo (RabbitMQ 4.3 quorum queue consumer timeouts)', { timeout: 180_000 }, () => {
  it("the workshop's run: each of the three ways sets the timeout; the broker cancels, keeps the channel, returns the message; the naive consumer is left idle, rmq-bench's processes everything once", {
    timeout: WORKSHOP_TIMEOUT_MS,
  }, async () => {
    const d = await workshopDoc<Doc>('consumer-timeout-demo');
    expect(d.ok, d.runs.flatMap((r) => r.problems).join('\n')).toBe(true);
    expect(d.runs.map((r) => r.via)).toEqual(['queue-argument', 'policy', 'consumer-argument']);
    for (const r of d.runs) {
      const all = r.messageIds;
      // The broker's side, measured (the claims table held, each one for a reason):
      expect(r.checks.map((c) => [c.claim, c.held])).toEqual(r.checks.map((c) => [c.claim, true]));
      expect(r.naive.channelOpenAfterCancel).toBe(true);
      const again = r.handling.deliveries.filter((x) => x.messageId === r.slowId);
      expect(again).toHaveLength(2);
      expect(again[1]!.redelivered).toBe(true);
      expect(again[1]!.acquiredCount).toBeGreaterThanOrEqual(1);

      // The naive consumer on 4.3.6 with amqplib: its late ack wakes the consumer at the broker,
      // whose next delivery goes to a tag amqplib has dropped; amqplib closes the channel.
      expect(r.naive.cancelAtMs).not.toBeNull();
      expect(r.naive.lateAckAtMs).not.toBeNull();
      expect(r.naive.channelClosedAtMs).not.toBeNull();
      expect(r.naive.channelError).toContain('Unknown consumer');
      const naiveDone = Object.keys(r.naive.processed).length;
      expect(naiveDone).toBeLessThan(all.length);
      expect(r.naiveEnd.ready).toBe(all.length - naiveDone + 1);
      expect(r.naiveProcessedButWaiting).toBe(1);
      expect(r.naiveIdleMs).toBeGreaterThanOrEqual(d.observeMs - 500);

      // rmq-bench's consumer: cancelled once, subscribed again, every message processed exactly once.
      expect(r.handling.cancels).toBe(1);
      expect(all.map((id) => r.handling.processed[id])).toEqual(all.map(() => 1));
      expect(r.handling.duplicatesAbsorbed).toBe(1);
      expect(r.handlingEnd).toEqual({ ready: 0, consumers: 0 });
    }
    // Queues and the temporary policy are gone.
    expect(await leftovers()).toEqual({ queues: [], policies: [] });
  });

  it('Ctrl+C while the slow message is held: exit 130, the queues and the temporary policy are gone', async () => {
    const child = execa(
      'node',
      [path.join(ROOT, 'bin', 'rmq-bench.js'), 'consumer-timeout-demo', '--via', 'policy', '--timeout', '20s', '--slow-work', '30s', '--auto'],
      { cwd: ROOT, reject: false, stdin: 'ignore', env: { RMQ_BENCH_QUIET: '1' } },
    );
    // The consumers are running once the naive queue shows a consumer holding a message.
    await eventually(
      async () =>
        expect(
          (await mgmtGet<{ messages_unacknowledged?: number }>(`/api/queues/%2F/${encodeURIComponent('rmq-bench.consumer-timeout.policy.naive')}`))
            .messages_unacknowledged ?? 0,
        ).toBeGreaterThan(0),
      30_000,
    );
    expect((await leftovers()).policies).toEqual([TEMP_POLICY]);
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode, String(r.stderr)).toBe(130);
    expect(await leftovers()).toEqual({ queues: [], policies: [] });
  });
});
