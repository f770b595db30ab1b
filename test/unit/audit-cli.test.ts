import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { HttpError, type ManagementClient } from '../../src/cluster/broker/management.js';
import { BrokerUnavailableError, UsageError } from '../../src/errors.js';
import { renderAudit } from '../../src/report/kinds/audit/text.js';
import { describeRequestError } from '../../src/cluster/broker/management.js';
import { SnapshotReader, SNAPSHOT_PATHS } from '../../src/cluster/broker/snapshot.js';
import { auditResultOf } from '../../src/scenarios/broker-tools/audit.js';
import { quorumQueue, stockSnapshot, stockWithDlq } from './audit.fixtures.js';
import { captureOutput, invocationOf } from './program-harness.js';

describe('audit and watch argv → options', () => {
  const { stderr } = captureOutput();

  it.each([
    [['audit'], { command: 'audit', options: { json: false, managementUrls: undefined, maxUnacked: 1_000, all: false } }],
    [
      ['audit', '--json', '--all', '--max-unacked', '50', '--management-urls', 'http://u:p@h1:15672, https://h2'],
      { command: 'audit', options: { json: true, managementUrls: ['http://u:p@h1:15672', 'https://h2'], maxUnacked: 50, all: true } },
    ],
    [['watch'], { command: 'watch', options: { json: false, once: false, intervalMs: 1_000, match: undefined, managementUrls: undefined } }],
    [
      ['watch', '--interval', '2s', '--match', '^demo\\.', '--management-urls', 'http://h:15672'],
      { command: 'watch', options: { json: false, once: false, intervalMs: 2_000, match: '^demo\\.', managementUrls: ['http://h:15672'] } },
    ],
    [
      ['watch', '--once', '--json', '--match', '^demo\\.'],
      { command: 'watch', options: { json: true, once: true, intervalMs: 1_000, match: '^demo\\.', managementUrls: undefined } },
    ],
  ])('%j', async (args, expected) => {
    expect(await invocationOf(args)).toEqual(expected);
  });

  it.each([
    [['audit', '--management-urls', 'ftp://user:s3cret@h'], /entry 1 is not an http\(s\):\/\/ URL/],
    [['audit', '--management-urls', 'http://ok:15672,not a url'], /entry 2 is not an http\(s\):\/\/ URL/],
    [['audit', '--max-unacked', '0'], /'0' is not a positive whole number/],
    [['watch', '--interval', '50ms'], /shorter than 200ms/],
    [['watch', '--match', '('], /is not a regular expression/],
  ])('%j is a usage error, with no password in the message', async (args, message) => {
    await expect(invocationOf(args)).rejects.toBeInstanceOf(CommanderError);
    const text = stderr.join('');
    expect(text).toMatch(message);
    expect(text).not.toContain('s3cret');
  });

  it('watch --json without --once: one JSON document per refresh would break stdout', async () => {
    await expect(invocationOf(['watch', '--json'])).rejects.toBeInstanceOf(UsageError);
  });
});

type Answer = unknown | Error;

/** A ManagementClient whose transport is a table: endpoint URL → answer (or error) for every path. */
function fakeManagement(answers: Record<string, Answer>): { client: ManagementClient; asked: string[] } {
  const asked: string[] = [];
  const endpoints = Object.keys(answers).map((url, i) => ({ node: `rabbit${i + 1}`, url }));
  const client = {
    endpoints,
    async requestOn(url: string, _method: string, path: string): Promise<unknown> {
      asked.push(`${url}${path}`);
      const a = answers[url];
      if (a instanceof Error) throw a;
      return path === '/api/overview' ? { node: 'rabbit@x', rabbitmq_version: '4.3.6' } : a;
    },
  } as unknown as ManagementClient;
  return { client, asked };
}

const refused = (): Error =>
  Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:15672'), { code: 'ECONNREFUSED' }) });

describe('SnapshotReader', () => {
  it('asks every path of a snapshot from one node; a refusing node is skipped and reported', async () => {
    const { client, asked } = fakeManagement({ 'http://a:15672': refused(), 'http://b:15672': [] });
    const r = await new SnapshotReader(client).read(SNAPSHOT_PATHS);
    expect(r.answeredBy).toEqual({ node: 'rabbit2', url: 'http://b:15672' });
    expect(r.unanswered.map((u) => [u.node, u.error])).toEqual([['rabbit1', 'ECONNREFUSED']]);
    expect(asked.filter((p) => p.startsWith('http://b:15672'))).toHaveLength(SNAPSHOT_PATHS.length);
  });

  it('stays with the node that answered, and asks the first again after retryFirstAfterMs', async () => {
    let now = 0;
    const { client, asked } = fakeManagement({ 'http://a:15672': refused(), 'http://b:15672': [] });
    const reader = new SnapshotReader(client, { retryFirstAfterMs: 10_000, now: () => now });
    await reader.read(['/api/nodes']);
    now = 5_000;
    const second = await reader.read(['/api/nodes']);
    expect(asked).toEqual(['http://a:15672/api/nodes', 'http://b:15672/api/nodes', 'http://b:15672/api/nodes']);
    expect(second.unanswered.map((u) => u.since)).toEqual(['1970-01-01T00:00:00.000Z']); // still reported, since the first failure
    now = 10_000;
    await reader.read(['/api/nodes']);
    expect(asked.slice(3)).toEqual(['http://a:15672/api/nodes', 'http://b:15672/api/nodes']);
  });

  it('an HTTP error other than 503 is the cluster’s answer: thrown at once', async () => {
    const { client, asked } = fakeManagement({ 'http://a:15672': new HttpError(401, 'http://a:15672/api/nodes', 'not_authorized'), 'http://b:15672': [] });
    await expect(new SnapshotReader(client).read(['/api/nodes'])).rejects.toBeInstanceOf(HttpError);
    expect(asked).toEqual(['http://a:15672/api/nodes']);
  });

  it('no node answers: BrokerUnavailableError naming each', async () => {
    const { client } = fakeManagement({ 'http://a:15672': refused(), 'http://b:15672': new HttpError(503, 'http://b:15672/api/nodes', 'busy') });
    const err = await new SnapshotReader(client).read(['/api/nodes']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BrokerUnavailableError);
    expect((err as Error).message).toMatch(/^no management endpoint answered \(rabbit1 http:\/\/a:15672: ECONNREFUSED; rabbit2 http:\/\/b:15672: HTTP 503/);
  });

  it.each([
    [refused(), 'ECONNREFUSED'],
    [Object.assign(new TypeError('fetch failed'), { cause: new Error('bad port') }), 'fetch failed: bad port'],
    [new Error('no answer within 3000 ms'), 'no answer within 3000 ms'],
  ])('describeRequestError(%s) → %s', (err, text) => {
    expect(describeRequestError(err)).toBe(text);
  });
});

describe('renderAudit', () => {
  const read = {
    answeredBy: { node: 'rabbit2', url: 'http://127.0.0.1:15673' },
    unanswered: [{ node: 'rabbit1', url: 'http://127.0.0.1:15672', error: 'ECONNREFUSED', since: '2026-01-01T00:00:00.000Z' }],
  };

  it('the stock topology: the failure with its fix, passes counted per check, the verdict', () => {
    const text = renderAudit(auditResultOf(stockSnapshot(), read, { maxUnacked: 1_000 }));
    const lines = text.split('\n');
    expect(lines.slice(0, 3)).toEqual([
      'audit of rabbit@rabbit1 (RabbitMQ 4.3.6), read from rabbit2 (http://127.0.0.1:15673)',
      '  3 nodes, 2 queues, 9 exchanges, 4 bindings, 1 policy',
      '  rabbit1 (http://127.0.0.1:15672) did not answer (ECONNREFUSED); asked the next one',
    ]);
    expect(text).toMatch(/^FAIL {2}retry-loop {8}queues demo\.orders → demo\.retry → demo\.orders$/m);
    expect(text).toMatch(/^ {6}fix: give the loop an exit/m);
    expect(text).toMatch(/^queue-durable\s+2\s+queue demo\.orders, queue demo\.retry$/m);
    expect(text).toMatch(/^node-running\s+3\s+node rabbit@rabbit1, node rabbit@rabbit2, node rabbit@rabbit3$/m);
    // Both stock queues dead-letter at most once: one warning block naming the two.
    expect(text).toMatch(/^WARN {2}dead-letter-strategy {2}2 queues\n {6}demo\.orders, demo\.retry\n {6}dead-lettering at-most-once \(the default\)/m);
    expect(lines[lines.length - 1]).toMatch(/^verdict: FAIL \(1 fail, 2 warn, \d+ pass\)$/);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(100);
  });

  it('the same warning on several queues is one block naming them all; --all lists each pass', () => {
    const s = stockWithDlq(0);
    s.queues.push(quorumQueue('a.one'), quorumQueue('a.two'));
    const r = auditResultOf(s, { ...read, unanswered: [] }, { maxUnacked: 1_000 });
    const text = renderAudit(r);
    expect(text).toMatch(/^WARN {2}dlx-configured {4}2 queues\n {6}a\.one, a\.two\n {6}no dead-letter exchange/m);
    expect(text.split('\n').pop()).toMatch(/^verdict: PASS with warnings \(0 fail, 5 warn, \d+ pass\)$/);
    const all = renderAudit(r, { all: true });
    expect(all).toMatch(/^PASS {2}delivery-limit {4}queue demo\.orders: delivery limit 5 \(policy\)$/m);
    expect(all).not.toContain('passed (--all lists each one)');
  });
});
