import { describe, expect, it } from 'vitest';
import type { AlarmDemoResult } from '../../src/scenarios/demos/alarm-plan.js';
import { alarmsOf, mgmtGet } from './cli.js';
import { WORKSHOP_TIMEOUT_MS, workshopDoc } from './workshop-run.js';

/*
 * The workshop's alarm-demo run (docs/WORKSHOP.md step 10), checked in detail: what each
 * publisher saw and reported, against what the consumer received. The Ctrl+C clean-up and the
 * producer's own handling of a blocked connection are in alarm.test.ts.
 */
describe('alarm-demo (a memory alarm on rabbit1, as publishers and a consumer see it)', { timeout: WORKSHOP_TIMEOUT_MS }, () => {
  it("the workshop's run: every publishing connection blocked, the consumer not; rmq-bench gives up at its deadline or waits, and loses no confirmed message", async () => {
    const d = await workshopDoc<AlarmDemoResult>('alarm-demo');
    expect(d.ok, d.problems.join('\n')).toBe(true);
    expect(d.checks.map((c) => [c.claim, c.held])).toEqual(d.checks.map((c) => [c.claim, true]));
    const by = Object.fromEntries(d.publishers.map((p) => [p.role, p]));
    expect(Object.keys(by)).toEqual(['deadline', 'waits', 'naive', 'sigterm', 'sigkill']);
    // Connections to every node were blocked: the alarm is on rabbit1 only.
    expect(new Set([by.deadline!.node, by.waits!.node, by.naive!.node])).toEqual(new Set(['rabbit1', 'rabbit2', 'rabbit3']));
    for (const r of ['deadline', 'waits', 'naive'] as const) {
      expect(by[r]!.blockedAtMs, r).not.toBeNull();
      expect(by[r]!.blockedAtMs!, r).toBeGreaterThan(d.timeline.raiseAtMs);
    }

    // rmq-bench with a deadline: gave up, nothing confirmed is missing, the rest is indeterminate (not counted as lost by it).
    const dl = by.deadline!;
    expect(dl.gaveUp).toMatch(/blocked the connection .*low on memory/);
    expect(dl.confirmedMissing).toBe(0);
    expect(dl.confirmed! + dl.indeterminate!).toBe(dl.sent);
    expect(dl.flush?.channel).toBe('skipped');

    // rmq-bench that waits: every message confirmed and delivered, no republish needed.
    const w = by.waits!;
    expect(w.completed).toBe(true);
    expect(w.confirmed).toBe(w.sent);
    expect(w.arrived).toBe(w.sent);
    expect(w.duplicates).toBe(0);
    expect(w.unblockedAtMs!).toBeGreaterThan(d.timeline.clearAtMs!);

    // The naive publisher kept "sending" while blocked; none of that reached the queue before the clear, all of it after.
    const n = by.naive!;
    expect(n.sentWhileBlocked).toBeGreaterThan(0);
    expect(n.blockedArrivedEarly).toBe(0);
    expect(n.arrived).toBe(n.sent);

    // The children: SIGTERM exits 143 on its own and reports that it could not flush; SIGKILL reports nothing.
    expect(by.sigterm!.exit).toBe('exit 143');
    expect(by.sigterm!.flush).toMatchObject({ channel: 'timeout', blockedBy: 'low on memory' });
    expect(by.sigkill!.exit).toBe('SIGKILL');
    for (const r of ['sigterm', 'sigkill'] as const) expect(by[r]!.sent, r).toBeGreaterThan(0);
    // SIGTERM's report is exact: nothing of its run arrived beyond what it said it wrote.
    expect(by.sigterm!.beyondReported).toBe(0);

    // The consumer on the alarmed node read the whole backlog while the alarm was on.
    expect(d.consumer.backlogDuringAlarm).toBe(d.backlog);
    expect(d.consumer.backlogMissing).toBe(0);
    expect(d.consumer.leftInQueue).toBe(0);

    // Afterwards: no alarm, no queue.
    expect(await alarmsOf()).toEqual([]);
    const names = (await mgmtGet<{ name: string }[]>('/api/queues?columns=name')).map((x) => x.name);
    expect(names).not.toContain('rmq-bench.alarm-demo');
  });
});
