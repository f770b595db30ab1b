import { describe, expect, it } from 'vitest';
import type { AppliedFault, FaultContext } from '../../src/faults/applied.js';
import { killAll } from '../../src/faults/kill-all.js';

/** A context whose injector records each kill and each start, and whose cluster is whole once started. */
function fakeContext(options: { failOn?: string; running?: string[] } = {}) {
  const calls: string[] = [];
  const names = ['rabbit@rabbit1', 'rabbit@rabbit2', 'rabbit@rabbit3'];
  const running = options.running ?? names;
  const ctx = {
    signal: new AbortController().signal,
    log: (line: string) => calls.push(`log ${line}`),
    management: {
      // Before the cut: the nodes as listed; after the restore, every node running.
      nodes: async () => names.map((name) => ({ name, running: calls.some((c) => c.startsWith('start')) || running.includes(name) })),
      queues: async () => [],
    },
    faults: {
      kind: 'docker',
      check: async () => undefined,
      async inject(node: string, kind: string): Promise<AppliedFault> {
        calls.push(`${kind} ${node}`);
        // Every kill is issued before any returns: let the others start first.
        await Promise.resolve();
        if (node === options.failOn) throw new Error(`could not kill ${node}`);
        const f: AppliedFault = {
          kind: 'kill',
          container: node,
          issuedAt: 0,
          appliedAt: 0,
          appliedAtIso: '',
          restored: false,
          async restore() {
            calls.push(`start ${node}`);
            f.restored = true;
          },
        };
        return f;
      },
    },
  } as unknown as FaultContext;
  return { ctx, calls };
}

const target = { node: 'rabbit@rabbit2', members: [], vhost: '/', options: {} };

describe('kill-all', () => {
  it('kills every running node, the target first, all issued before any returns; the others are also faulted', async () => {
    const { ctx, calls } = fakeContext();
    const { fault, alsoFaulted } = await killAll.apply(ctx, target);
    expect(calls).toEqual(['kill rabbit@rabbit2', 'kill rabbit@rabbit1', 'kill rabbit@rabbit3']);
    expect(alsoFaulted).toEqual(['rabbit@rabbit1', 'rabbit@rabbit3']);
    expect(fault.kind).toBe('kill-all');
    expect(fault.container).toBe('rabbit@rabbit2+rabbit@rabbit1+rabbit@rabbit3');
  });

  it('the restore starts every node, once, and returns when the cluster is whole', async () => {
    const { ctx, calls } = fakeContext();
    const { fault } = await killAll.apply(ctx, target);
    await fault.restore();
    await fault.restore();
    expect(calls.filter((c) => c.startsWith('start'))).toEqual(['start rabbit@rabbit2', 'start rabbit@rabbit1', 'start rabbit@rabbit3']);
    expect(fault.restored).toBe(true);
  });

  it('a kill that fails: the nodes already killed are started again, and the error goes on', async () => {
    const { ctx, calls } = fakeContext({ failOn: 'rabbit@rabbit3' });
    await expect(killAll.apply(ctx, target)).rejects.toThrow('could not kill rabbit@rabbit3');
    expect(calls.filter((c) => c.startsWith('start'))).toEqual(['start rabbit@rabbit2', 'start rabbit@rabbit1']);
  });

  it('a node that is not running is left alone', async () => {
    const { ctx, calls } = fakeContext({ running: ['rabbit@rabbit1', 'rabbit@rabbit2'] });
    const { alsoFaulted } = await killAll.apply(ctx, target);
    expect(calls).toEqual(['kill rabbit@rabbit2', 'kill rabbit@rabbit1']);
    expect(alsoFaulted).toEqual(['rabbit@rabbit1']);
  });
});
