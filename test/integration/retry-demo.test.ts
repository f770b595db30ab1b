import { describe, expect, it } from 'vitest';
import { mgmtGet, parseJson, runCli } from './cli.js';

describe('retry-demo', { timeout: 120_000 }, () => {
  it('two failed attempts, each retried after demo.retry’s 5 s TTL, then processed once', async () => {
    const r = await runCli(['retry-demo', '--auto', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    const d = parseJson<{ ok: boolean; ttlMs: number; attempts: { gapMs: number | null; outcome: string; death?: string }[]; processedTimes: number }>(r);
    expect(d.ok).toBe(true);
    expect(d.ttlMs).toBe(5000);
    expect(d.attempts.map((a) => a.outcome)).toEqual(['nack-drop', 'nack-drop', 'processed']);
    for (const a of d.attempts.slice(1)) {
      expect(a.gapMs).toBeGreaterThanOrEqual(5000);
      expect(a.death).toContain('from demo.');
    }
    expect(d.processedTimes).toBe(1);
  });

  it('fails its verdict when the retry is slower than the tolerance allows (tolerance 0 and a 5 s TTL)', async () => {
    // A gap can never be exactly 5000 ms: with no tolerance the demo must flag it.
    const r = await runCli(['retry-demo', '--auto', '--failures', '1', '--tolerance', '0ms', '--json']);
    expect(r.exitCode).toBe(1);
    expect(parseJson<{ ok: boolean }>(r).ok).toBe(false);
    const bindings = await mgmtGet<{ destination: string }[]>('/api/exchanges/%2F/demo.dlx/bindings/source');
    expect(bindings.map((b) => b.destination)).toContain('demo.retry');
  });
});
