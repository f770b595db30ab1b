import { describe, expect, it } from 'vitest';
import { PASSWORD, USER, mgmtGet, parseJson, runCli, MGMT } from './cli.js';
import { WORKSHOP_TIMEOUT_MS, workshopDoc } from './workshop-run.js';

interface DlqJson {
  ok: boolean;
  results: { reason: string; ok: boolean; problems: string[]; dead: { firstDeathReason?: string }[]; deliveriesPerMessage: Record<string, number> }[];
}

const auth = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
async function mgmt(method: string, path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${MGMT}${path}`, {
    method,
    headers: { authorization: auth, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok && res.status !== 404) throw new Error(`${method} ${path}: HTTP ${res.status}`);
}

describe('dlq-demo', { timeout: 180_000 }, () => {
  it("every reason dead-letters as claimed (the workshop's two runs), demo.retry is bound again and no temporary policy is left", {
    timeout: WORKSHOP_TIMEOUT_MS,
  }, async () => {
    const docs = [await workshopDoc<DlqJson>('dlq-demo --reason expired'), await workshopDoc<DlqJson>('dlq-demo --reason delivery_limit,rejected,maxlen')];
    for (const d of docs) expect(d.ok).toBe(true);
    const d = { results: docs.flatMap((x) => x.results) };
    expect(d.results.map((x) => x.reason).sort()).toEqual(['delivery_limit', 'expired', 'maxlen', 'rejected']);
    d.results.sort((a, b) => (a.reason === 'delivery_limit' ? -1 : b.reason === 'delivery_limit' ? 1 : 0));
    for (const x of d.results) {
      expect(x.problems).toEqual([]);
      expect(x.dead.length).toBeGreaterThan(0);
      expect(new Set(x.dead.map((m) => m.firstDeathReason))).toEqual(new Set([x.reason]));
    }
    expect(Object.values(d.results[0]!.deliveriesPerMessage)).toEqual([6, 6, 6]);
    const bindings = await mgmtGet<{ source: string }[]>('/api/queues/%2F/demo.retry/bindings');
    expect(bindings.map((b) => b.source)).toContain('demo.dlx');
    const policies = await mgmtGet<{ name: string }[]>('/api/policies/%2F');
    expect(policies.map((p) => p.name)).toEqual(['dlx-orders']);
  });

  it('fails its verdict (exit 1) when the setup is broken: delivery-limit 2 instead of 5', async () => {
    await mgmt('PUT', '/api/policies/%2F/it-broken-limit', {
      pattern: '^demo\\.orders$',
      'apply-to': 'queues',
      priority: 50,
      definition: { 'dead-letter-exchange': 'demo.dlx', 'delivery-limit': 2 },
    });
    try {
      const r = await runCli(['dlq-demo', '--reason', 'delivery_limit', '--auto', '--json']);
      expect(r.exitCode).toBe(1);
      const d = parseJson<DlqJson>(r);
      expect(d.ok).toBe(false);
      expect(d.results[0]!.problems.join('\n')).toContain('delivered 3 times, not 6');
    } finally {
      await mgmt('DELETE', '/api/policies/%2F/it-broken-limit');
    }
  });
});
