import { describe, expect, it } from 'vitest';
import type { AppliedFault } from '../../src/faults/applied.js';
import type { FaultKind } from '../../src/faults/kinds.js';
import { awaitsElection } from '../../src/faults/registry.js';
import type { Election } from '../../src/faults/election.js';
import type { LeaderFault } from '../../src/faults/at-leader.js';
import { startLeaderFault, type FaultPhase, type LeaderFaultDriver, type LeaderFaultPlan, NO_ELECTION_HOLD_MS } from '../../src/faults/leader-fault-run.js';
import type { Rejoin } from '../../src/faults/rejoin.js';
import type { Context } from '../../src/context.js';
import { DeadlineError, InterruptedError } from '../../src/errors.js';
import type { Clock } from '../../src/util/retry.js';

/** A clock that moves only when the test says so; sleepers wake when their time has come. */
class FakeClock implements Clock {
  t = 1_000;
  private sleepers: { until: number; resolve: () => void }[] = [];
  now(): number {
    return this.t;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(new InterruptedError());
      const s = { until: this.t + ms, resolve };
      this.sleepers.push(s);
      signal?.addEventListener('abort', () => {
        this.sleepers = this.sleepers.filter((x) => x !== s);
        reject(new InterruptedError());
      });
    });
  }
  get sleeping(): number {
    return this.sleepers.length;
  }
  advance(ms: number): void {
    this.t += ms;
    const due = this.sleepers.filter((s) => s.until <= this.t);
    this.sleepers = this.sleepers.filter((s) => s.until > this.t);
    for (const s of due) s.resolve();
  }
}

/** Lets promise callbacks run (the handle's steps are chained on them). */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

/** Waits until the signal aborts, then rejects as the real waits do. */
const untilAborted = (signal: AbortSignal): Promise<never> =>
  new Promise((_, reject) => {
    if (signal.aborted) reject(new InterruptedError());
    signal.addEventListener('abort', () => reject(new InterruptedError()));
  });

interface Script {
  /** Election: ms after the fault call, or 'timeout', or 'hang' (until aborted). */
  election?: number | 'timeout' | 'hang';
  rejoin?: number | 'timeout' | 'hang';
  faultFails?: boolean;
  restoreFails?: boolean;
  /** The fault call returns only when the test resolves it. */
  faultGate?: Promise<void>;
}

function fakeDriver(clock: FakeClock, script: Script) {
  const calls = { fault: 0, restore: 0, rejoin: 0 };
  const driver: LeaderFaultDriver = {
    async fault(kind: FaultKind): Promise<LeaderFault> {
      calls.fault++;
      if (script.faultFails) throw new Error("queue 'q' is a classic queue; leader faults need a quorum queue");
      const issuedAt = clock.now();
      if (script.faultGate) await script.faultGate;
      const applied: AppliedFault = {
        kind,
        container: 'rabbit2',
        issuedAt,
        appliedAt: issuedAt + 5,
        appliedAtIso: '2026-12-01T00:00:00.000Z',
        restored: false,
        async restore() {
          if (applied.restored) return;
          calls.restore++;
          if (script.restoreFails) throw new Error('docker: no such container');
          applied.restored = true;
        },
      };
      return {
        oldLeader: 'rabbit2',
        alsoFaulted: [],
        before: {
          name: 'q',
          type: 'quorum',
          leader: 'rabbit@rabbit2',
          members: ['rabbit@rabbit1', 'rabbit@rabbit2', 'rabbit@rabbit3'],
          online: ['rabbit@rabbit1', 'rabbit@rabbit2', 'rabbit@rabbit3'],
          messages: 0,
        },
        fault: applied,
      };
    },
    async waitForNewLeader(lf, timeoutMs, signal): Promise<Election> {
      const e = script.election ?? 100;
      if (e === 'hang') return untilAborted(signal);
      if (e === 'timeout') throw new DeadlineError(`no new leader for 'q' after ${timeoutMs} ms`, timeoutMs);
      clock.t = lf.fault.issuedAt + e;
      return { newLeader: 'rabbit3', source: 'management', electedAt: clock.t, electionMs: e };
    },
    async waitForRejoin(_lf, restoredAt, timeoutMs, signal): Promise<Rejoin> {
      calls.rejoin++;
      const r = script.rejoin ?? 7_000;
      if (r === 'hang') return untilAborted(signal);
      if (r === 'timeout') throw new DeadlineError(`rabbit2 did not rejoin after ${timeoutMs} ms`, timeoutMs);
      clock.t = restoredAt + r;
      return { restoredAt, rejoinedAt: clock.t, rejoinMs: r, members: ['a', 'b', 'c'], online: ['a', 'b', 'c'], leaderAfter: 'rabbit3' };
    },
  };
  return { driver, calls };
}

function setup(script: Script, plan: Partial<LeaderFaultPlan> = {}) {
  const clock = new FakeClock();
  const ac = new AbortController();
  const logs: string[] = [];
  const phases: FaultPhase[] = [];
  const ctx = { signal: ac.signal, log: (l: string) => logs.push(l) } as unknown as Context;
  const { driver, calls } = fakeDriver(clock, script);
  const handle = startLeaderFault(ctx, { vhost: '/', queue: 'q' }, 'kill', {
    restoreAfterMs: 0,
    electionTimeoutMs: 60_000,
    rejoinTimeoutMs: 120_000,
    clock,
    driver,
    onPhase: (p) => phases.push(p),
    ...plan,
  });
  return { clock, ac, logs, phases, handle, calls };
}

describe('startLeaderFault: the sequence, with a fake clock and a fake driver', () => {
  const ends: {
    name: string;
    script: Script;
    plan?: Partial<LeaderFaultPlan>;
    phases: FaultPhase[];
    restores: number;
    restored: boolean;
    error: (new (...a: never[]) => Error) | null;
  }[] = [
    {
      name: 'restore once the new leader is seen',
      script: {},
      phases: ['faulting', 'electing', 'restoring', 'rejoining', 'rejoined'],
      restores: 1,
      restored: true,
      error: null,
    },
    {
      name: '--no-restore: left faulted, never restored',
      script: {},
      plan: { restoreAfterMs: null },
      phases: ['faulting', 'electing', 'left-faulted'],
      restores: 0,
      restored: false,
      error: null,
    },
    {
      name: 'no new leader in time: failed, and the node is restored',
      script: { election: 'timeout' },
      phases: ['faulting', 'electing', 'failed'],
      restores: 1,
      restored: true,
      error: DeadlineError,
    },
    {
      name: '--no-restore and no new leader: failed, still left faulted',
      script: { election: 'timeout' },
      plan: { restoreAfterMs: null },
      phases: ['faulting', 'electing', 'failed'],
      restores: 0,
      restored: false,
      error: DeadlineError,
    },
    {
      name: 'the node does not rejoin: failed, restored exactly once',
      script: { rejoin: 'timeout' },
      phases: ['faulting', 'electing', 'restoring', 'rejoining', 'failed'],
      restores: 1,
      restored: true,
      error: DeadlineError,
    },
    {
      name: 'the fault call fails: nothing to restore',
      script: { faultFails: true },
      phases: ['faulting', 'failed'],
      restores: 0,
      restored: false,
      error: Error,
    },
  ];
  for (const c of ends) {
    it(c.name, async () => {
      const { handle, phases, calls } = setup(c.script, c.plan);
      const { timeline, error } = await handle.done;
      expect(phases).toEqual(c.phases);
      expect(timeline.phase).toBe(c.phases.at(-1));
      expect(calls.restore).toBe(c.restores);
      expect(timeline.restored).toBe(c.restored);
      if (c.error === null) expect(error).toBeUndefined();
      else expect(error).toBeInstanceOf(c.error);
      expect(timeline.error === null).toBe(c.error === null);
      // close() after the end changes nothing.
      await handle.close();
      expect(calls.restore).toBe(c.restores);
    });
  }

  it('fills the timeline: fault, election, restore and rejoin times in order', async () => {
    const { handle } = setup({ election: 2_000, rejoin: 7_000 });
    const { timeline: t } = await handle.done;
    expect(t).toMatchObject({ kind: 'kill', node: 'rabbit2', newLeader: 'rabbit3', electionSource: 'management', electionMs: 2_000, rejoinMs: 7_000 });
    expect(t.membersBefore).toHaveLength(3);
    expect(t.issuedAt).toBe(1_000);
    expect(t.appliedAt).toBe(1_005);
    expect(t.electedAt).toBe(3_000);
    expect(t.restoredAt).toBe(3_000);
    expect(t.rejoinedAt).toBe(10_000);
  });

  it('--hold: holds the node down until that long after the fault, then restores', async () => {
    const { handle, phases, calls, clock } = setup({ election: 2_000 }, { restoreAfterMs: 30_000 });
    await settle();
    expect(phases.at(-1)).toBe('holding');
    clock.advance(27_999);
    await settle();
    expect(calls.restore).toBe(0);
    clock.advance(1);
    const { timeline } = await handle.done;
    expect(calls.restore).toBe(1);
    expect(timeline.restoredAt! - timeline.issuedAt!).toBe(30_000);
  });

  it('--hold shorter than the election: no hold', async () => {
    const { handle, phases } = setup({ election: 5_000 }, { restoreAfterMs: 1_000 });
    await handle.done;
    expect(phases).not.toContain('holding');
  });

  it('Ctrl+C during --hold 30s: the node is restored at once, without waiting out the hold', async () => {
    const { handle, phases, calls, clock, ac } = setup({ election: 2_000 }, { restoreAfterMs: 30_000 });
    await settle();
    expect(phases.at(-1)).toBe('holding');
    expect(clock.sleeping).toBe(1);
    ac.abort();
    const { timeline, error } = await handle.done;
    expect(error).toBeInstanceOf(InterruptedError);
    expect(calls.restore).toBe(1);
    expect(calls.rejoin).toBe(0);
    expect(timeline.restored).toBe(true);
    expect(timeline.restoredAt).toBe(3_000); // the clock never moved past the election
  });

  const closes: { name: string; script: Script; phase: FaultPhase }[] = [
    { name: 'while the election is awaited', script: { election: 'hang' }, phase: 'electing' },
    { name: 'while the rejoin is awaited', script: { rejoin: 'hang' }, phase: 'rejoining' },
  ];
  for (const c of closes) {
    it(`close() ${c.name}: stops waiting and the fault is undone, once`, async () => {
      const { handle, phases, calls } = setup(c.script);
      await settle();
      expect(phases.at(-1)).toBe(c.phase);
      const out = await handle.close();
      expect(out.error).toBeInstanceOf(InterruptedError);
      expect(out.timeline.phase).toBe('failed');
      expect(calls.restore).toBe(1);
      expect(out.timeline.restored).toBe(true);
    });
  }

  it('close() while the fault call is still running: the fault is undone when it lands', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const { handle, calls } = setup({ faultGate: gate });
    await settle();
    const closing = handle.close();
    open();
    const out = await closing;
    expect(out.error).toBeInstanceOf(InterruptedError);
    expect(calls.restore).toBe(1);
    expect(out.timeline.node).toBe('rabbit2');
  });

  it('Ctrl+C before the fault: nothing is faulted', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    ac.abort();
    const { driver, calls } = fakeDriver(clock, {});
    const ctx = { signal: ac.signal, log: () => undefined } as unknown as Context;
    const out = await startLeaderFault(ctx, { vhost: '/', queue: 'q' }, 'pause', { restoreAfterMs: 0, electionTimeoutMs: 1, rejoinTimeoutMs: 1, clock, driver })
      .done;
    expect(out.error).toBeInstanceOf(InterruptedError);
    expect(calls.fault).toBe(0);
  });

  it('latency takes no leader away: no election is awaited, and the fault is held at least 10 s', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const phases: FaultPhase[] = [];
    const { driver, calls } = fakeDriver(clock, { election: 'timeout' });
    const ctx = { signal: ac.signal, log: () => undefined } as unknown as Context;
    const h = startLeaderFault(ctx, { vhost: '/', queue: 'q' }, 'latency', {
      restoreAfterMs: 0,
      electionTimeoutMs: 60_000,
      rejoinTimeoutMs: 120_000,
      clock,
      driver,
      onPhase: (p) => phases.push(p),
    });
    await settle();
    expect(phases).toEqual(['faulting', 'holding']);
    clock.advance(NO_ELECTION_HOLD_MS - 1);
    await settle();
    expect(calls.restore).toBe(0);
    clock.advance(1);
    const { timeline, error } = await h.done;
    expect(error).toBeUndefined();
    expect(phases).toEqual(['faulting', 'holding', 'restoring', 'rejoining', 'rejoined']);
    expect(timeline.newLeader).toBeNull();
    expect(timeline.electionMs).toBeNull();
    expect(timeline.restoredAt! - timeline.issuedAt!).toBe(NO_ELECTION_HOLD_MS);
  });

  it.each(['kill', 'latency', 'quorum-loss'] as const)('awaitElection false (chaos): %s is held exactly restoreAfterMs, no election awaited', async (kind) => {
    const clock = new FakeClock();
    const ac = new AbortController();
    const phases: FaultPhase[] = [];
    // An election wait would fail the sequence: it must not be called.
    const { driver, calls } = fakeDriver(clock, { election: 'timeout' });
    const ctx = { signal: ac.signal, log: () => undefined } as unknown as Context;
    const h = startLeaderFault(ctx, { vhost: '/', queue: 'q' }, kind, {
      restoreAfterMs: 3_000,
      awaitElection: false,
      electionTimeoutMs: 0,
      rejoinTimeoutMs: 120_000,
      clock,
      driver,
      onPhase: (p) => phases.push(p),
    });
    await settle();
    expect(phases).toEqual(['faulting', 'holding']);
    clock.advance(2_999);
    await settle();
    expect(calls.restore).toBe(0);
    clock.advance(1);
    const { timeline, error } = await h.done;
    expect(error).toBeUndefined();
    expect(phases).toEqual(['faulting', 'holding', 'restoring', 'rejoining', 'rejoined']);
    expect(timeline.restoredAt! - timeline.issuedAt!).toBe(3_000);
    expect(timeline.electionMs).toBeNull();
  });

  it.each([
    ['kill', true],
    ['stop', true],
    ['pause', true],
    ['disconnect', true],
    ['partition', true],
    ['latency', false],
  ] as const)('%s: a new leader awaited while it is on: %s', (kind, expected) => {
    expect(awaitsElection(kind)).toBe(expected);
  });

  it('a restore that fails is logged, and the timeline says the node was not restored', async () => {
    const { handle, logs } = setup({ election: 'timeout', restoreFails: true });
    const { timeline, error } = await handle.done;
    expect(error).toBeInstanceOf(DeadlineError);
    expect(timeline.restored).toBe(false);
    expect(logs).toEqual(["could not restore rabbit2 after 'kill': docker: no such container"]);
  });
});
