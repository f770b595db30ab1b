import { describe, expect, it } from 'vitest';
import { versionItems } from '../../src/audit/version-items.js';
import { CHECK_IDS } from '../../src/audit/check.js';
import { renderAudit } from '../../src/report/kinds/audit/text.js';
import { auditResultOf } from '../../src/scenarios/broker-tools/audit.js';
import { stockSnapshot } from './audit.fixtures.js';

describe("audit: the rules of the broker's version, per check that depends on it", () => {
  const says = (version: string | undefined): Record<string, string> => Object.fromEntries(versionItems(version).map((v) => [v.check, v.says]));

  it('each item names a check of the checklist, once', () => {
    const checks = versionItems('4.3.6').map((v) => v.check);
    expect(new Set(checks).size).toBe(checks.length);
    for (const c of checks) expect(CHECK_IDS).toContain(c);
  });
  it.each([
    [
      '3.10.8',
      {
        'delivery-limit': /no delivery limit unless one is set/,
        'requeue-loop': /every return counts/,
        'mirroring-policy': /mirror classic queues/,
        'consumer-timeout': /only the broker-wide consumer_timeout/,
        partitions: /cluster_partition_handling decides/,
      },
    ],
    [
      '4.0.5',
      {
        'delivery-limit': /delivery limit of 20/,
        'requeue-loop': /every return counts/,
        'mirroring-policy': /do nothing/,
        'consumer-timeout': /at a check once a minute/,
        partitions: /cluster_partition_handling decides/,
      },
    ],
    [
      '4.3.6',
      {
        'delivery-limit': /delivery limit of 20/,
        'requeue-loop': /never does/,
        'mirroring-policy': /do nothing/,
        'consumer-timeout': /cancels a consumer at its timeout/,
        partitions: /Khepri/,
      },
    ],
    [undefined, { 'requeue-loop': /never does/, partitions: /Khepri/ }],
  ] as const)('%s', (version, expected) => {
    const s = says(version);
    for (const [check, re] of Object.entries(expected)) expect(s[check], check).toMatch(re);
  });
  it('the report lists them under the items, wrapped to 100 columns', () => {
    const read = { answeredBy: { node: 'rabbit1', url: 'http://127.0.0.1:15672' }, unanswered: [] };
    const text = renderAudit(auditResultOf(stockSnapshot(), read, { maxUnacked: 1_000 }));
    expect(text).toContain('checked by the rules of RabbitMQ 4.3.6:');
    expect(text).toMatch(/^ {2}requeue-loop:\n {4}only a failed delivery counts/m);
    for (const l of text.split('\n')) expect(l.length).toBeLessThanOrEqual(100);
  });
});
