import { describe, expect, it } from 'vitest';
import { mgmtGet, parseJson, runCli } from './cli.js';

interface Doc {
  ok: boolean;
  how: string;
  rows: { queueType: string; deliveryMode: string; confirmed: number; survived: number; expected: number }[];
  problems: string[];
}

describe('durability-demo: what survives every node restarting', { timeout: 300_000 }, () => {
  it.each(['stop', 'kill'] as const)('--how %s: the quorum queue keeps both kinds, the classic queue only the persistent messages', async (how) => {
    const r = await runCli(['durability-demo', '-n', '200', '--how', how, '--auto', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    const d = parseJson<Doc>(r);
    expect(d.ok, d.problems.join('\n')).toBe(true);
    expect(d.how).toBe(how);
    expect(d.rows.map((x) => [x.queueType, x.deliveryMode, x.confirmed, x.survived])).toEqual([
      ['classic', 'transient', 200, 0],
      ['classic', 'persistent', 200, 200],
      ['quorum', 'transient', 200, 200],
      ['quorum', 'persistent', 200, 200],
    ]);
    // Its queues are gone, and the cluster is whole again for the next test.
    const queues = (await mgmtGet<{ name: string }[]>('/api/queues')).map((q) => q.name);
    expect(queues.filter((q) => q.startsWith('demo.durability'))).toEqual([]);
    const nodes = await mgmtGet<{ running: boolean }[]>('/api/nodes');
    expect(nodes.filter((n) => n.running)).toHaveLength(3);
  });
});
