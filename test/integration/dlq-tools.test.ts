import { afterAll, describe, expect, it } from 'vitest';
import { eventually, parseJson, runCli, uniqueName, withChannel } from './cli.js';

const target = uniqueName('replay');

describe('dlq inspect and dlq replay', { timeout: 180_000 }, () => {
  afterAll(async () => {
    await withChannel((ch) => ch.deleteQueue(target)).catch(() => undefined);
  });

  it('inspect reads the dead letters without removing them; replay after a crash mid-replay loses nothing', async () => {
    const demo = await runCli(['dlq-demo', '--reason', 'rejected', '-n', '6', '--auto']);
    expect(demo.exitCode, demo.stderr).toBe(0);
    await withChannel((ch) => ch.assertQueue(target, { durable: true, arguments: { 'x-queue-type': 'quorum' } }));

    const inspect = parseJson<{ rows: { messageId: string; reason: string; sourceQueue: string; count: number; firstDeathAt: string }[]; total: number }>(
      await runCli(['dlq', 'inspect', '--json']),
    );
    expect(inspect.rows.map((r) => r.messageId).sort()).toEqual(Array.from({ length: 6 }, (_, i) => `dlq-rejected-${i + 1}`));
    for (const r of inspect.rows) {
      expect(r.reason).toBe('rejected');
      expect(r.sourceQueue).toBe('demo.orders');
      expect(r.count).toBe(1);
      expect(Number.isNaN(Date.parse(r.firstDeathAt))).toBe(false);
    }
    // Still there after inspect (the queue applies the requeue asynchronously).
    await eventually(async () => expect((await withChannel((ch) => ch.checkQueue('demo.dlq'))).messageCount).toBe(6), 5_000);

    const crashed = await runCli(['dlq', 'replay', '--to', target, '--crash-after', '3']);
    expect(crashed.exitCode).toBe(70);
    const again = await runCli(['dlq', 'replay', '--to', target, '--json']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(parseJson<{ leftInQueue: number }>(again).leftInQueue).toBe(0);

    const ids = await withChannel(async (ch) => {
      const got: string[] = [];
      for (;;) {
        const m = await ch.get(target, { noAck: true });
        if (!m) break;
        got.push(String(m.properties.messageId));
      }
      return got;
    });
    // Every dead letter arrived; the one in flight at the crash may have arrived twice.
    expect(new Set(ids)).toEqual(new Set(inspect.rows.map((r) => r.messageId)));
    expect(ids.length).toBeGreaterThanOrEqual(6);
    expect(ids.length).toBeLessThanOrEqual(7);
  });

  it('replay --filter keeps the messages that do not match in the DLQ', async () => {
    const demo = await runCli(['dlq-demo', '--reason', 'expired', '-n', '2', '--auto']);
    expect(demo.exitCode, demo.stderr).toBe(0);
    const r = parseJson<{ replayed: number; skipped: number; leftInQueue: number }>(
      await runCli(['dlq', 'replay', '--to', target, '--filter', 'reason=rejected', '--json']),
    );
    expect(r.replayed).toBe(0);
    expect(r.skipped).toBe(2);
    expect(r.leftInQueue).toBe(2);
  });
});
