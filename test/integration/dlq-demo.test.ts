import { describe, expect, it } from 'vitest';
import { PASSWORD, USER, mgmtGet, parseJson, runCli, MGMT } from './cli.js';
import { WORKSHOP_TIMEOUT_MS, workshopDoc, workshopOutcome } from './workshop-run.js';
import { witnessAt } from './witness.js';

interface DlqJson {
  ok: boolean;
  results: {
    reason: string;
    ok: boolean;
    problems: string[];
    dead: { messageId?: string; firstDeathReason?: string }[];
    deliveriesPerMessage: Record<string, number>;
  }[];
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
  it("every reason dead-letters as claimed (the workshop's two runs), by demo.dlq's own contents; demo.retry is bound again and no temporary policy is left", {
    timeout: WORKSHOP_TIMEOUT_MS,
  }, async () => {
    const lines = ['dlq-demo --reason expired', 'dlq-demo --reason delivery_limit,rejected,maxlen'];
    const outcomes = await Promise.all(lines.map((l) => workshopOutcome(l)));
    const docs = await Promise.all(lines.map((l) => workshopDoc<DlqJson>(l)));
    for (const d of docs) expect(d.ok).toBe(true);
    const results = docs.flatMap((x) => x.results);
    const witness = outcomes.flatMap((o) => o.witness!);
    expect(results.map((x) => x.reason).sort()).toEqual(['delivery_limit', 'expired', 'maxlen', 'rejected']);
    // Three messages a reason; max-length 2 with drop-head dead-letters the oldest one.
    const EXPECTED_IN_DLQ: Record<string, number> = { delivery_limit: 3, expired: 3, rejected: 3, maxlen: 1 };
    for (const x of results) {
      expect(x.problems).toEqual([]);
      // demo.dlq as the broker holds it once the reason ran (the tests' witness: ids and headers).
      const w = witnessAt(witness, 'dead-lettered', x.reason, 'demo.dlq');
      const ours = w.ids!.map((id, i) => [id, w.firstDeathReasons![i]] as const).filter(([id]) => id.startsWith(`dlq-${x.reason}-`));
      expect(ours.length, x.reason).toBe(EXPECTED_IN_DLQ[x.reason]);
      expect(new Set(ours.map(([, why]) => why))).toEqual(new Set([x.reason]));
      // rmq-bench's reading of the DLQ names the same messages.
      expect(x.dead.map((m) => m.messageId).sort()).toEqual(ours.map(([id]) => id).sort());
      expect(new Set(x.dead.map((m) => m.firstDeathReason))).toEqual(new Set([x.reason]));
    }
    const limit = results.find((x) => x.reason === 'delivery_limit')!;
    expect(Object.values(limit.deliveriesPerMessage)).toEqual([6, 6, 6]);
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
