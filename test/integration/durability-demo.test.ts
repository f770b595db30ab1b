import { describe, expect, it } from 'vitest';
import { mgmtGet, parseJson, runCli } from './cli.js';
import { WORKSHOP_TIMEOUT_MS, workshopDoc } from './workshop-run.js';

interface Doc {
  ok: boolean;
  how: string;
  rows: { queueType: string; deliveryMode: string; confirmed: number; survived: number; expected: number }[];
  problems: string[];
}

describe('durability-demo: what survives every node restarting', { timeout: 300_000 }, () => {
  // --how stop is the workshop's step 1 (durability-demo -n 1000): its run is checked here.
  it.each([
    ['stop', 1000],
    ['kill', 200],
  ] as const)(
    '--how %s: the quorum queue keeps both kinds, the classic queue only the persistent messages',
    { timeout: WORKSHOP_TIMEOUT_MS },
    async (how, n) => {
      let d: Doc;
      if (how === 'stop') d = await workshopDoc<Doc>('durability-demo -n 1000');
      else {
        const r = await runCli(['durability-demo', '-n', String(n), '--how', how, '--auto', '--json']);
        expect(r.exitCode, r.stderr).toBe(0);
        d = parseJson<Doc>(r);
      }
      expect(d.ok, d.problems.join('\n')).toBe(true);
      expect(d.how).toBe(how);
      expect(d.rows.map((x) => [x.queueType, x.deliveryMode, x.confirmed, x.survived])).toEqual([
        ['classic', 'transient', n, 0],
        ['classic', 'persistent', n, n],
        ['quorum', 'transient', n, n],
        ['quorum', 'persistent', n, n],
      ]);
      // Its queues are gone, and the cluster is whole again for the next test.
      const queues = (await mgmtGet<{ name: string }[]>('/api/queues')).map((q) => q.name);
      expect(queues.filter((q) => q.startsWith('demo.durability'))).toEqual([]);
      const nodes = await mgmtGet<{ running: boolean }[]>('/api/nodes');
      expect(nodes.filter((n) => n.running)).toHaveLength(3);
    },
  );
});
