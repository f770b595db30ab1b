import { execa } from 'execa';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, eventually, mgmtGet, parseJson, runCli } from './cli.js';
import { WORKSHOP_TIMEOUT_MS, workshopDoc } from './workshop-run.js';

interface Round {
  index: number;
  kind: string;
  delayed: boolean;
  deliveryCount: number;
  expectedMs: number;
  measured: { messageId: string; delayMs: number; deliveryCount: number }[];
  ok: boolean;
}
interface Doc {
  ok: boolean;
  via: string;
  queue: string;
  setup: { definition: Record<string, unknown>; effective: Record<string, unknown> | null };
  rounds: Round[];
  processed: number;
  messages: string[];
  problems: string[];
}

async function policyNames(): Promise<string[]> {
  return (await mgmtGet<{ name: string }[]>('/api/policies')).map((p) => p.name);
}

/** The capped run: type failed by policy, min 500 ms, max 1 s, two messages returned four times. */
async function cappedRun(): Promise<{ exitCode: number | undefined; stderr: string; d: Doc }> {
  // min 500 ms, max 1 s: the third and fourth returns would wait 1.5 s and 2 s without the cap,
  // past max + the 400 ms tolerance.
  const r = await runCli([
    'delayed-retry-demo',
    '--type',
    'failed',
    '--min',
    '500ms',
    '--max',
    '1s',
    '-n',
    '2',
    '--returns',
    '4',
    '--tolerance',
    '400ms',
    '--auto',
    '--json',
  ]);
  return { exitCode: r.exitCode, stderr: r.stderr, d: parseJson<Doc>(r) };
}

/** A problem the demo found with a delay (checkDelay's wording): timing, not a count. */
const DELAY_PROBLEM = /: came back after \d+ ms, (before the \d+ ms delay|more than \d+ \+ \d+ ms)$/;

describe('delayed-retry-demo (RabbitMQ 4.3 native delayed retry)', { timeout: 180_000 }, () => {
  // One run of the capped demo serves the two tests below: the first holds its counts (no
  // retry), the second its delays. Only the delays' test may run again, and then it runs the
  // demo again.
  let first: ReturnType<typeof cappedRun> | undefined;
  const firstRun = (): ReturnType<typeof cappedRun> => {
    first ??= cappedRun();
    return first;
  };

  it('type failed by policy: each of the 2 messages comes back every round with its x-delivery-count, is processed once, and the policy is removed', async () => {
    const { exitCode, stderr, d } = await firstRun();
    // A late or early redelivery fails the demo's own verdict (exit 1); that is the next test's business.
    expect([0, 1], stderr).toContain(exitCode);
    expect(d.problems.filter((p) => !DELAY_PROBLEM.test(p))).toEqual([]);
    expect(d.queue).toBe('demo.orders');
    expect(d.rounds.map((x) => [x.kind, x.deliveryCount, x.expectedMs])).toEqual([
      ['reject', 1, 500],
      ['close', 2, 1000],
      ['reject', 3, 1000],
      ['close', 4, 1000],
      ['nack', 4, 0],
    ]);
    for (const x of d.rounds) {
      expect(x.measured.map((m) => m.messageId).sort(), `${x.kind} #${x.index}`).toEqual([...d.messages].sort());
      for (const m of x.measured) expect(m.deliveryCount, `${x.kind} #${x.index}`).toBe(x.deliveryCount);
    }
    expect(d.messages).toHaveLength(2);
    // The broker's own view of the policy while it ran: dlx-orders' keys were still in force.
    expect(d.setup.effective).toMatchObject({ 'dead-letter-exchange': 'demo.dlx', 'delivery-limit': 5, 'delayed-retry-type': 'failed' });
    expect(d.processed).toBe(2);
    expect(await policyNames()).not.toContain('rmq-bench-delayed-retry');
    await eventually(async () => expect((await mgmtGet<{ policy?: string }>('/api/queues/%2F/demo.orders')).policy).toBe('dlx-orders'));
  });

  let timingAttempts = 0;
  // A timing test on a loaded machine (five clusters at once): a redelivery can come back a few
  // hundred ms late, so it may run a second time, with a fresh run of the demo. It asserts delays
  // only; the counts of the same run are the test above, which never retries.
  it('type failed by policy: reject and close wait min × x-delivery-count, capped at max (a run where no cap would fail); a nack comes back at once', {
    retry: 1,
  }, async () => {
    const { d } = timingAttempts++ === 0 ? await firstRun() : await cappedRun();
    expect(d.problems.filter((p) => DELAY_PROBLEM.test(p))).toEqual([]);
    expect(d.rounds.length).toBeGreaterThan(0);
    for (const x of d.rounds) {
      for (const m of x.measured) {
        // Both bounds: not before the delay (100 ms of clock slack), not later than the tolerance.
        expect(m.delayMs, `${x.kind} #${x.index}`).toBeGreaterThanOrEqual(x.expectedMs - 100);
        expect(m.delayMs, `${x.kind} #${x.index}`).toBeLessThanOrEqual(x.expectedMs + 400);
        // The cap shows: the third and fourth counted returns came back well before min × count.
        if (x.delayed && x.deliveryCount >= 3) expect(m.delayMs, `${x.kind} #${x.index}`).toBeLessThan(500 * x.deliveryCount - 100);
      }
    }
  });

  it('type returned by queue arguments: nacks wait min; the queue is deleted at the end', async () => {
    const r = await runCli([
      'delayed-retry-demo',
      '--type',
      'returned',
      '--via',
      'arguments',
      '--min',
      '400ms',
      '--max',
      '1000ms',
      '-n',
      '2',
      '--returns',
      '3',
      '--auto',
      '--json',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const d = parseJson<Doc>(r);
    expect(d.ok, d.problems.join('\n')).toBe(true);
    expect(d.queue).toBe('demo.delayed-retry');
    expect(d.setup.definition).toMatchObject({ 'x-delayed-retry-type': 'returned', 'x-dead-letter-exchange': 'demo.dlx', 'x-delivery-limit': 5 });
    expect(d.rounds.map((x) => [x.kind, x.delayed, x.expectedMs])).toEqual([
      ['nack', true, 400],
      ['nack', true, 400],
      ['nack', true, 400],
      ['reject', false, 0],
    ]);
    const queues = (await mgmtGet<{ name: string }[]>('/api/queues')).map((q) => q.name);
    expect(queues).not.toContain('demo.delayed-retry');
  });

  it("type all (the workshop's run, defaults: min 2 s, max 10 s): every kind of return is delayed by min × x-delivery-count", {
    timeout: WORKSHOP_TIMEOUT_MS,
  }, async () => {
    const d = await workshopDoc<Doc>('delayed-retry-demo');
    expect(d.ok, d.problems.join('\n')).toBe(true);
    expect(d.rounds.map((x) => [x.kind, x.expectedMs])).toEqual([
      ['reject', 2000],
      ['nack', 2000],
      ['close', 4000],
      ['reject', 6000],
      ['nack', 6000],
    ]);
    // Both bounds, with the default tolerance (1 s late at most); the three messages each round.
    for (const round of d.rounds) {
      expect(round.measured, `${round.kind} #${round.index}`).toHaveLength(3);
      for (const m of round.measured) {
        expect(m.delayMs, `${round.kind} #${round.index}`).toBeGreaterThanOrEqual(round.expectedMs);
        expect(m.delayMs, `${round.kind} #${round.index}`).toBeLessThanOrEqual(round.expectedMs + 1_000);
      }
    }
  });

  it('a broken setup (no delayed-retry policy) fails the verdict: the messages come back at once', async () => {
    const r = await runCli(['delayed-retry-demo', '--skip-setup', '--min', '500ms', '--max', '1000ms', '-n', '1', '--returns', '2', '--auto', '--json']);
    expect(r.exitCode).toBe(1);
    const d = parseJson<Doc>(r);
    expect(d.ok).toBe(false);
    expect(d.problems.join('\n')).toContain('before the 500 ms delay');
    expect(d.processed).toBe(1);
  });

  it('more counted returns than the delivery-limit is a usage error, before anything is touched', async () => {
    const r = await runCli(['delayed-retry-demo', '--type', 'failed', '--returns', '6', '--auto']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('delivery-limit 5');
    expect(await policyNames()).not.toContain('rmq-bench-delayed-retry');
  });

  it('Ctrl+C while a message is delayed: exit 130 and the temporary policy is gone', async () => {
    // The policy list is read live; a queue's policy and counts come with its statistics, which
    // may still show the run before this one (up to 5 s): the child's own policy is seen here.
    expect(await policyNames()).not.toContain('rmq-bench-delayed-retry');
    const child = execa('node', [path.join(ROOT, 'bin', 'rmq-bench.js'), 'delayed-retry-demo', '--min', '20s', '--max', '60s', '-n', '1', '--auto'], {
      cwd: ROOT,
      reject: false,
      stdin: 'ignore',
      env: { RMQ_BENCH_QUIET: '1' },
    });
    await eventually(async () => expect(await policyNames()).toContain('rmq-bench-delayed-retry'), 30_000);
    // Interrupt once the first return has happened: the broker holds the message for 20 s (stats lag up to 5 s).
    await eventually(
      async () => expect((await mgmtGet<{ messages_delayed?: number }>('/api/queues/%2F/demo.orders')).messages_delayed ?? 0).toBeGreaterThan(0),
      20_000,
    );
    child.kill('SIGINT');
    const r = await child;
    expect(r.exitCode, String(r.stderr)).toBe(130);
    expect(await policyNames()).not.toContain('rmq-bench-delayed-retry');
  });
});
