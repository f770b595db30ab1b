import { afterAll, describe, expect, it } from 'vitest';
import type { PublisherResult } from '../../src/client/publisher-result.js';
import { MAX_REFUSALS, backoffMs } from '../../src/client/refused-resends.js';
import { parseJson, runCli, uniqueName, withChannel } from './cli.js';

/*
 * A queue that refuses every publish (a full quorum queue with x-overflow reject-publish): the
 * broker nacks (0-9-1) or rejects (AMQP 1.0, amqp:resource-limit-exceeded) each one. The producer
 * sends each refused message again after a growing backoff, gives it up after MAX_REFUSALS, and
 * the run ends: exit 1 (the verdict failed), every message nacked and given up. The broker's own
 * count (a passive declare) says none of them got in.
 */

const N = 5;
const MAX_LENGTH = 10;
/** The run must end well within this: it ends after the backoffs (3.75 s); measured 4.3 to 4.6 s (the test prints it). */
const RUN_BOUND_MS = 30_000;
const created: string[] = [];

/** A quorum queue that refuses publishes once full, filled: its message count, as the broker says. */
async function fullQueue(queue: string): Promise<number> {
  created.push(queue);
  return withChannel(async (ch) => {
    await ch.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-max-length': MAX_LENGTH, 'x-overflow': 'reject-publish' } });
    // One at a time, each confirmed or refused before the next: past the limit every one is refused.
    let refused = 0;
    for (let i = 0; i < 2 * MAX_LENGTH; i++) {
      await new Promise<void>((resolve) => ch.sendToQueue(queue, Buffer.from('fill'), { persistent: true }, (err) => resolve(void (err ? refused++ : 0))));
    }
    expect(refused).toBeGreaterThan(0);
    return (await ch.checkQueue(queue)).messageCount;
  });
}

async function messageCount(queue: string): Promise<number> {
  return withChannel(async (ch) => (await ch.checkQueue(queue)).messageCount);
}

afterAll(async () => {
  for (const q of created) await withChannel((ch) => ch.deleteQueue(q)).catch(() => undefined);
});

describe('a queue that refuses every publish: resent with backoff, given up, the run ends', { timeout: 120_000 }, () => {
  it.each(['amqp091', 'amqp10'] as const)('--protocol %s', async (protocol) => {
    const queue = uniqueName(`refusals-${protocol}`);
    const before = await fullQueue(queue);
    // A quorum queue checks its limit after an enqueue: it can hold one past x-max-length.
    expect(before).toBeGreaterThanOrEqual(MAX_LENGTH);

    const startedAt = performance.now();
    const r = await runCli(['producer', '--protocol', protocol, '--queue', queue, '--exchange', '', '-n', String(N), '--rate', '0', '--json'], {
      timeoutMs: RUN_BOUND_MS,
    });
    const tookMs = performance.now() - startedAt;
    process.stderr.write(`refusals, ${protocol}: the run ended after ${Math.round(tookMs)} ms\n`);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(tookMs).toBeLessThan(RUN_BOUND_MS);
    // The backoffs were waited out: 250 + 500 + 1,000 + 2,000 ms between a message's sends.
    const backoffs = Array.from({ length: MAX_REFUSALS - 1 }, (_, i) => backoffMs(i + 1)).reduce((a, b) => a + b, 0);
    expect(tookMs).toBeGreaterThanOrEqual(backoffs);

    const d = parseJson<PublisherResult>(r);
    expect([d.completed, d.interrupted, d.gaveUp]).toEqual([true, false, null]);
    expect([d.written, d.confirmed, d.nacked, d.refusedGivenUp]).toEqual([N, 0, N, N]);
    // Each message sent MAX_REFUSALS times, refused each time; then not again.
    expect(d.publishes).toBe(N * MAX_REFUSALS);
    if (protocol === 'amqp10') {
      expect(d.amqp10?.accepted).toBe(0);
      expect(d.amqp10?.rejected).toBe(N * MAX_REFUSALS);
      expect(d.amqp10?.rejections.map((x) => x.condition)).toEqual(['amqp:resource-limit-exceeded']);
    }
    // The timeline: not one event per refusal; one per message given up.
    const nacks = d.events.filter((e) => e.type === 'nack');
    expect(nacks.length).toBeLessThan(d.publishes);
    expect(nacks.filter((e) => e.detail.endsWith('not sent again'))).toHaveLength(N);
    expect(Object.keys(d).at(-2)).toBe('refusedGivenUp'); // the last field of the result, before the document's reportFile

    // The broker's own count: none of the run's messages got in.
    expect(await messageCount(queue)).toBe(before);
  });
});
