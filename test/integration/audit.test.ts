import amqp from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  droppedUnroutable,
  eventually,
  mgmtGet,
  closedPort,
  parseJson,
  PASSWORD,
  runCli,
  uniqueName,
  USER,
  withChannel,
  MGMT,
  NODES,
  AMQP_URLS,
  MGMT_PORTS,
} from './cli.js';

interface Item {
  id: string;
  status: 'pass' | 'warn' | 'fail';
  object: string;
  message: string;
  fix: string | null;
}
interface AuditJson {
  kind: string;
  ok: boolean;
  counts: { pass: number; warn: number; fail: number };
  answeredBy: { node: string; url: string };
  unanswered: { node: string; url: string; error: string }[];
  items: Item[];
}

const auth = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
async function mgmt(method: string, path: string, body?: unknown): Promise<number> {
  const res = await fetch(`${MGMT}${path}`, {
    method,
    headers: { authorization: auth, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  await res.text();
  return res.status;
}

async function audit(args: string[] = []): Promise<{ exitCode: number; doc: AuditJson; stderr: string }> {
  const r = await runCli(['audit', '--json', ...args], { timeoutMs: 60_000 });
  return { exitCode: r.exitCode, doc: parseJson<AuditJson>(r), stderr: r.stderr };
}

/** The count an unroutable-dropped failure reports: `7 messages dropped as unroutable (...)`. */
function droppedIn(message: string): number {
  const m =
    /^(\d+) messages? dropped as unroutable \((\d+) messages? returned to a mandatory publisher\), counted since the nodes started \(a restart resets it\)/.exec(
      message,
    );
  if (!m) throw new Error(`not an unroutable-dropped failure: ${message}`);
  return Number(m[1]);
}

/**
 * The one item about the cluster. The cluster has no cluster_name set, so each node gives its own
 * name as the cluster's, and the audit's overview comes from whichever node answered first.
 */
function clusterItem(doc: AuditJson, id: string): Item {
  const hits = doc.items.filter((i) => i.id === id && /^cluster rabbit@rabbit[1-3]$/.test(i.object));
  if (hits.length !== 1)
    throw new Error(
      `expected one ${id} item for the cluster, got: ${doc.items
        .filter((i) => i.id === id)
        .map((i) => i.object)
        .join(', ')}`,
    );
  return hits[0]!;
}

function item(doc: AuditJson, id: string, object: string): Item {
  const hit = doc.items.find((i) => i.id === id && i.object === object);
  if (!hit)
    throw new Error(
      `no ${id} item for ${object}: ${doc.items
        .filter((i) => i.id === id)
        .map((i) => i.object)
        .join(', ')}`,
    );
  return hit;
}

/*
 * The stock cluster (cluster/definitions.json) audited, as measured on RabbitMQ 4.3.6:
 *
 * - Everything about the nodes passes (3 nodes running, no partition, no alarm), and so do
 *   demo.orders (durable quorum queue, DLX demo.dlx and delivery-limit 5 from policy
 *   dlx-orders, 3/3 members), demo.retry (its dead letters reach demo.orders through the
 *   default exchange) and the exchanges demo.orders and demo.dlx.
 * - The one real shortfall is the retry loop demo.orders → demo.dlx → demo.retry (TTL 5 s) →
 *   demo.orders. Nothing in the broker ends it: a message the consumer rejects
 *   (requeue=false) on every attempt cycles forever, and a message that exceeds
 *   delivery-limit 5 is dead-lettered to demo.retry and then DROPPED when it expires back
 *   towards demo.orders, by RabbitMQ's dead-letter cycle detection (a cycle without a
 *   rejection); the delivery limit does not end the loop, it makes it lose the message (the
 *   last test below shows it on a copy of the topology). With only definitions.json loaded
 *   (a fresh cluster, CI) nothing else is bound to demo.dlx: retry-loop FAILS, and the audit
 *   exits 1. After `rmq-bench dlq-demo`, demo.dlq is bound to demo.dlx too: every dead letter
 *   also lands there, so none is lost, but the loop still has no end: retry-loop WARNS (and
 *   dlq-messages warns while demo.dlq holds dead letters).
 * - demo.orders and demo.retry dead-letter at most once (the default strategy): a warning each,
 *   since dlq-demo --strategy measured that such dead letters are lost while their target's
 *   leader is down.
 * - Queues that other tests leave behind (it.*) draw warnings (no DLX, messages and no
 *   consumer); they are not part of the stock topology and are not asserted on here.
 * - unroutable-dropped counts, over the cluster and since its nodes started, the messages the
 *   broker dropped because no binding matched (non-mandatory, no alternate exchange). Nothing
 *   in the stock topology drops one, but the counter is cumulative and other tests (and the
 *   last case below) may have: the item fails exactly when the overview's drop_unroutable,
 *   read just before and just after the audit, is > 0.
 * - demo.orders is emptied first: a message published on a channel that still aimed at a
 *   faulted leader can land in it long after the run that sent it drained it (seen after a
 *   `compare --fault disconnect`: one duplicate, more than 30 s after the drain), and a ready
 *   message with no consumer is a warning of its own.
 */
describe('audit of the stock cluster', { timeout: 180_000 }, () => {
  beforeAll(async () => {
    await withChannel((ch) => ch.purgeQueue('demo.orders'));
    // The audit reads the management API's figures, which lag the queue by up to 5 s.
    await eventually(async () => expect((await mgmtGet<{ messages_ready?: number }>('/api/queues/%2F/demo.orders')).messages_ready ?? 0).toBe(0), 30_000);
    // The audit reads /api/queues, whose members online come from the queues' statistics. Right
    // after the nodes start (this shard's setup makes its containers again on each new checkout),
    // they lag the nodes: seen here after a node's restart, a demo queue listed with 3 members
    // online for 3 s (from before), then 2 for 4 s, then 3, while the queue's own endpoint said 3
    // throughout. The stock cluster is whole once that list has said so for 12 s running (more
    // than two statistics intervals).
    let wholeSince: number | undefined;
    await eventually(
      async () => {
        const list = await mgmtGet<{ name: string; type?: string; members?: string[]; online?: string[] }[]>('/api/queues/%2F');
        const demo = list.filter((q) => q.name.startsWith('demo.') && q.type === 'quorum');
        const whole = demo.length >= 2 && demo.every((q) => (q.online ?? []).length === 3 && (q.members ?? []).length === 3);
        wholeSince = whole ? (wholeSince ?? performance.now()) : undefined;
        expect(wholeSince !== undefined && performance.now() - wholeSince >= 12_000, 'every demo quorum queue listed with 3 members online for 12 s').toBe(
          true,
        );
      },
      90_000,
      1_000,
    );
  });

  it('passes everything but the retry loop (fail without demo.dlq bound to demo.dlx, warn with it) and, once a message was dropped, unroutable-dropped', async () => {
    const bindings = await mgmtGet<{ destination: string; destination_type: string }[]>('/api/exchanges/%2F/demo.dlx/bindings/source');
    const dlqBound = bindings.some((b) => b.destination === 'demo.dlq' && b.destination_type === 'queue');
    const droppedBefore = await droppedUnroutable();
    const { exitCode, doc, stderr } = await audit();
    const droppedAfter = await droppedUnroutable();

    expect(doc.kind).toBe('audit');
    expect(doc.answeredBy).toEqual({ node: NODES[0], url: MGMT });
    expect(exitCode, stderr).toBe(doc.ok ? 0 : 1);
    expect(doc.ok).toBe(doc.counts.fail === 0);

    const stock = doc.items.filter((i) => /^(queues? demo\.|exchange demo\.|node |cluster |policies|dead-letter graph)/.test(i.object));
    const notPassing = stock.filter((i) => i.status !== 'pass').map((i) => `${i.status} ${i.id} ${i.object}`);
    const loop = `${dlqBound ? 'warn' : 'fail'} retry-loop queues demo.orders → demo.retry → demo.orders`;
    // demo.dlq exists once dlq-demo has run; it warns while it holds dead letters.
    const dlq = doc.items.find((i) => i.id === 'dlq-messages' && i.object === 'queue demo.dlq');
    // Both stock queues dead-letter at most once (the default): a warning each.
    const strategy = ['warn dead-letter-strategy queue demo.orders', 'warn dead-letter-strategy queue demo.retry'];
    // The counter only grows (no node restarts during the audit), and the audit read it between
    // the two reads: > 0 before means it saw more than 0; 0 after means it saw 0. Only a first
    // drop counted between the two reads (another file's traffic, counted up to 5 s late) leaves
    // the status open, and then its count is still bounded by the second read.
    const unroutable = clusterItem(doc, 'unroutable-dropped');
    const fails = droppedBefore > 0 || (droppedAfter > 0 && unroutable.status === 'fail');
    const dropped = fails ? [`fail unroutable-dropped ${unroutable.object}`] : [];
    expect(notPassing.sort()).toEqual([loop, ...strategy, ...dropped, ...(dlq?.status === 'warn' ? ['warn dlq-messages queue demo.dlq'] : [])].sort());
    if (fails) {
      expect(droppedIn(unroutable.message)).toBeGreaterThanOrEqual(Math.max(droppedBefore, 1));
      expect(droppedIn(unroutable.message)).toBeLessThanOrEqual(droppedAfter);
    } else {
      expect(unroutable.message).toMatch(/^no message dropped as unroutable since the nodes started( \(\d+ messages? returned to a mandatory publisher\))?$/);
    }
    if (!dlqBound || fails) expect(exitCode).toBe(1);

    expect(clusterItem(doc, 'cluster-size').message).toBe('3 nodes');
    for (const n of ['rabbit@rabbit1', 'rabbit@rabbit2', 'rabbit@rabbit3']) {
      for (const id of ['node-running', 'partitions', 'alarms']) expect(item(doc, id, `node ${n}`).status).toBe('pass');
    }
    expect(item(doc, 'delivery-limit', 'queue demo.orders').message).toBe('delivery limit 5 (policy)');
    // A note, not a finding: the audit cannot see how consumers requeue.
    expect(item(doc, 'requeue-loop', 'queue demo.orders')).toMatchObject({ status: 'pass', fix: null });
    expect(item(doc, 'requeue-loop', 'queue demo.orders').message).toMatch(/^delivery limit 5 \(policy\) counts failed deliveries only: since RabbitMQ 4\.3 /);
    expect(item(doc, 'dlx-configured', 'queue demo.orders').message).toMatch(/^dead-letter exchange 'demo\.dlx' \(policy /);
    expect(item(doc, 'dlx-route', 'queue demo.retry').message).toMatch(/^dead letters reach demo\.orders through the default exchange/);
    expect(item(doc, 'quorum-members', 'queue demo.orders').message).toMatch(/^3\/3 members online, leader rabbit@rabbit[123]$/);
    expect(item(doc, 'exchange-durable', 'exchange demo.dlx').status).toBe('pass');
    expect(item(doc, 'retry-loop', 'queues demo.orders → demo.retry → demo.orders').message).toMatch(/demo\.retry holds them 5000 ms/);
    expect(item(doc, 'consumer-timeout', 'queue demo.orders').message).toMatch(/^consumer timeout the broker's consumer_timeout \(rabbitmq\.conf/);
  });

  it("consumer-timeout: a queue's two days are flagged; a consumer's own x-consumer-timeout is shown as the override it is", async () => {
    const long = uniqueName('ct-long');
    const short = uniqueName('ct-short');
    const conn = await amqp.connect(AMQP_URLS[0]!);
    try {
      const ch = await conn.createChannel();
      await ch.assertQueue(long, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-consumer-timeout': 172_800_000 } });
      await ch.assertQueue(short, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-consumer-timeout': 60_000 } });
      await ch.consume(short, () => undefined, { consumerTag: 'it-slow-worker', arguments: { 'x-consumer-timeout': 86_400_000 } });
      // /api/consumers lists a consumer once the channel's statistics have been emitted (about 5 s).
      // On this queue: 4.3.6 keeps listing an earlier run's it-slow-worker, on its deleted queue,
      // minutes after its connection closed (the queue was deleted under the consumer).
      await eventually(
        async () =>
          expect(
            (await mgmtGet<{ consumer_tag: string; queue: { name: string } }[]>('/api/consumers')).map((c) => `${c.consumer_tag} ${c.queue.name}`),
          ).toContain(`it-slow-worker ${short}`),
        30_000,
      );
      const { doc } = await audit();
      const l = item(doc, 'consumer-timeout', `queue ${long}`);
      expect(l.status).toBe('warn');
      expect(l.message).toMatch(/^consumer timeout 48 h \(queue argument\): the queue's 48 h is as good as none/);
      const sh = item(doc, 'consumer-timeout', `queue ${short}`);
      expect(sh.status).toBe('warn');
      expect(sh.message).toContain(
        "1 min (queue argument); 1 consumer(s) override it with x-consumer-timeout: it-slow-worker 24 h: consumer it-slow-worker's 24 h",
      );
      await ch.deleteQueue(long);
      await ch.deleteQueue(short);
    } finally {
      await conn.close().catch(() => undefined);
    }
  });

  it('the report goes to stdout (`audit | grep FAIL` finds it); with --json stdout holds the document alone and the report is on stderr', async () => {
    const plain = await runCli(['audit', '--all']);
    const json = await runCli(['audit', '--all', '--json']);
    expect(plain.stdout).toMatch(/^audit of rabbit@/);
    expect(plain.stdout).toMatch(/^(PASS|WARN|FAIL) /m);
    expect(plain.stderr).toBe('');
    expect(parseJson<{ kind: string }>(json).kind).toBe('audit');
    // The same report. Two audits are two reads of a live cluster: an item's status can change
    // between them (a member of demo.orders seen offline in one and back in the next, after an
    // earlier file's fault), so the reports are compared by the checks they list.
    const checks = (text: string): string[] =>
      [
        ...new Set(
          text
            .split('\n')
            .map((l) => /^(?:PASS|WARN|FAIL) +(\S+)/.exec(l)?.[1])
            .filter((id): id is string => id !== undefined),
        ),
      ].sort();
    expect(checks(plain.stdout).length).toBeGreaterThan(10);
    expect(checks(json.stderr)).toEqual(checks(plain.stdout));
    expect(json.stderr).toMatch(/^audit of rabbit@/);
    expect(json.stderr).toMatch(/\nverdict: (PASS|FAIL)/);
  });

  it('bad input: an unreachable management URL is one line on stderr and exit 68; the password never shows', async () => {
    const port = await closedPort();
    const r = await runCli(['audit', '--management-urls', `http://demo:s3cret@127.0.0.1:${port}`], { timeoutMs: 60_000 });
    expect(r.exitCode).toBe(68);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^rmq-bench: no management endpoint answered \(127\.0\.0\.1:\d+ http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED\)/);
    expect(r.stdout + r.stderr).not.toContain('s3cret');
    const bad = await runCli(['audit', '--management-urls', 'localhost:15672']);
    expect(bad.exitCode).toBe(2);
  });

  it('--management-urls: credentials from the URL, the next endpoint when one does not answer, masked everywhere', async () => {
    const port = await closedPort();
    const r = await runCli(['audit', '--json', '--management-urls', `http://${USER}:${PASSWORD}@127.0.0.1:${port},http://127.0.0.1:${MGMT_PORTS[2]}`], {
      timeoutMs: 60_000,
    });
    const doc = parseJson<AuditJson>(r);
    expect(doc.answeredBy).toEqual({ node: `127.0.0.1:${MGMT_PORTS[2]}`, url: `http://127.0.0.1:${MGMT_PORTS[2]}` });
    expect(doc.unanswered).toEqual([expect.objectContaining({ node: `127.0.0.1:${port}`, error: 'ECONNREFUSED' })]);
    expect(r.stdout + r.stderr).not.toContain(`${USER}:${PASSWORD}@`);
  });
});

describe('audit of topologies broken on purpose (one case per check)', { timeout: 180_000 }, () => {
  const P = uniqueName('audit'); // it.audit.<random>: every object below starts with it
  const re = P.replace(/\./g, '\\.');
  const q = (s: string): string => `${P}.${s}`;
  const policies = [`${P}-low`, `${P}-high`];
  const queues = [
    'transient',
    'classic',
    'nodlx',
    'orphan',
    'missing',
    'unlimited',
    'shadowed',
    'work',
    'wait',
    'feeder',
    'dlq',
    'idle',
    'busy',
    'events',
    'events-kept',
  ].map(q);
  const exchanges = ['transient-x', 'empty-dlx', 'loop-dlx', 'dlq-dlx', 'shadow-dlx', 'unroutable-x'].map(q);
  let doc: AuditJson;
  let exitCode: number;

  beforeAll(async () => {
    await withChannel(async (ch) => {
      const quorum = (args: Record<string, unknown> = {}): amqp.Options.AssertQueue => ({ durable: true, arguments: { 'x-queue-type': 'quorum', ...args } });
      await ch.assertExchange(q('transient-x'), 'direct', { durable: false });
      await ch.assertExchange(q('empty-dlx'), 'fanout', { durable: true });
      await ch.assertExchange(q('loop-dlx'), 'fanout', { durable: true });
      await ch.assertExchange(q('dlq-dlx'), 'fanout', { durable: true });
      await ch.assertExchange(q('shadow-dlx'), 'fanout', { durable: true });
      await ch.assertQueue(q('transient'), { durable: false, arguments: { 'x-queue-type': 'classic' } });
      await ch.assertQueue(q('classic'), { durable: true, arguments: { 'x-queue-type': 'classic' } });
      await ch.assertQueue(q('nodlx'), quorum());
      await ch.assertQueue(q('orphan'), quorum({ 'x-dead-letter-exchange': q('empty-dlx') }));
      await ch.assertQueue(q('missing'), quorum({ 'x-dead-letter-exchange': q('no-such-exchange') }));
      await ch.assertQueue(q('unlimited'), quorum({ 'x-dead-letter-exchange': q('dlq-dlx'), 'x-delivery-limit': -1 }));
      await ch.assertQueue(q('shadowed'), quorum());
      // The loop: work → loop-dlx → wait (TTL) → default exchange → work, and nothing else.
      await ch.assertQueue(q('work'), quorum({ 'x-dead-letter-exchange': q('loop-dlx'), 'x-delivery-limit': 1 }));
      await ch.assertQueue(q('wait'), quorum({ 'x-message-ttl': 2_000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': q('work') }));
      await ch.bindQueue(q('wait'), q('loop-dlx'), '');
      // A DLQ with a dead letter in it (published straight to it: same queue, same depth).
      await ch.assertQueue(q('feeder'), quorum({ 'x-dead-letter-exchange': q('dlq-dlx') }));
      await ch.assertQueue(q('dlq'), quorum());
      await ch.bindQueue(q('dlq'), q('dlq-dlx'), '');
      await ch.assertQueue(q('idle'), quorum({ 'x-dead-letter-exchange': q('dlq-dlx') }));
      await ch.assertQueue(q('busy'), quorum({ 'x-dead-letter-exchange': q('dlq-dlx') }));
      // A stream keeps every message until a retention drops its oldest segments.
      await ch.assertQueue(q('events'), { durable: true, arguments: { 'x-queue-type': 'stream' } });
      await ch.assertQueue(q('events-kept'), { durable: true, arguments: { 'x-queue-type': 'stream', 'x-max-age': '7D' } });
      ch.sendToQueue(q('dlq'), Buffer.from('dead'), { persistent: true });
      ch.sendToQueue(q('idle'), Buffer.from('one'), { persistent: true });
      ch.sendToQueue(q('idle'), Buffer.from('two'), { persistent: true });
      await ch.waitForConfirms();
    });
    // The article's mistake: a higher-priority policy on the same queue, without the lower one's keys.
    expect(
      await mgmt('PUT', `/api/policies/%2F/${policies[0]}`, {
        pattern: `^${re}\\.shadowed$`,
        'apply-to': 'queues',
        priority: 1,
        definition: { 'dead-letter-exchange': q('shadow-dlx'), 'delivery-limit': 5 },
      }),
    ).toBe(201);
    expect(
      await mgmt('PUT', `/api/policies/%2F/${policies[1]}`, {
        pattern: `^${re}\\.shadowed$`,
        'apply-to': 'queues',
        priority: 15,
        definition: { 'max-length': 10_000 },
      }),
    ).toBe(201);

    // Message counts come from the management API's statistics (refreshed about every 5 s).
    await eventually(async () => {
      const list = await mgmtGet<{ name: string; messages?: number }[]>(`/api/queues/%2F?columns=name,messages`);
      const depth = (s: string): number | undefined => list.find((x) => x.name === q(s))?.messages;
      expect([depth('dlq'), depth('idle')]).toEqual([1, 2]);
    }, 30_000);
    ({ exitCode, doc } = await audit());
  });

  afterAll(async () => {
    for (const p of policies) await mgmt('DELETE', `/api/policies/%2F/${p}`);
    await withChannel(async (ch) => {
      for (const name of queues) await ch.deleteQueue(name);
      for (const name of exchanges) await ch.deleteExchange(name);
    });
  });

  it('exits 1: something fails', () => {
    expect(exitCode).toBe(1);
    expect(doc.ok).toBe(false);
  });

  it.each([
    ['queue-durable', `queue ${q('transient')}`, 'fail', /^transient: it and its messages are gone when its node restarts$/],
    ['queue-type', `queue ${q('classic')}`, 'warn', /^classic queue: one copy, on one node/],
    ['exchange-durable', `exchange ${q('transient-x')}`, 'fail', /^transient: it and its bindings are gone/],
    ['dlx-configured', `queue ${q('nodlx')}`, 'warn', /^no dead-letter exchange: .* past its delivery limit \(20\) is dropped$/],
    ['dlx-route', `queue ${q('orphan')}`, 'fail', /no queue is bound for them: they are dropped$/],
    ['dlx-route', `queue ${q('missing')}`, 'fail', /^dead-letter exchange '.*\.no-such-exchange' does not exist: dead letters are dropped$/],
    ['delivery-limit', `queue ${q('unlimited')}`, 'fail', /^delivery limit unlimited \(-1 from the argument\)/],
    ['policy-shadowed', `queue ${q('shadowed')}`, 'fail', /-high \(priority 15\) wins, so .*-low \(priority 1\) loses dead-letter-exchange, delivery-limit$/],
    ['retry-loop', `queues ${q('work')} → ${q('wait')} → ${q('work')}`, 'fail', /wait holds them 2000 ms\), and no other queue receives them/],
    ['dlq-messages', `queue ${q('dlq')}`, 'warn', /^dead-letter queue holds 1 message: each one failed somewhere$/],
    ['no-consumers', `queue ${q('idle')}`, 'warn', /^2 messages ready and no consumer$/],
    ['stream-retention', `queue ${q('events')}`, 'warn', /^a stream without max-age or max-length-bytes/],
  ])('%s: %s → %s', (id, object, status, message) => {
    const i = item(doc, id, object);
    expect(i.status).toBe(status);
    expect(i.message).toMatch(message);
    expect(i.fix).toEqual(expect.any(String));
  });

  it("feature-flags: every stable flag of this cluster is enabled, by the broker's own list", async () => {
    const flags = await mgmtGet<{ state: string; stability: string }[]>('/api/feature-flags');
    expect(flags.filter((f) => f.state === 'disabled' && f.stability !== 'experimental')).toEqual([]);
    const i = clusterItem(doc, 'feature-flags');
    expect([i.status, i.message]).toEqual(['pass', `every stable feature flag of ${flags.length} enabled`]);
  });

  it('stream-retention: a stream declared with x-max-age passes, naming it', () => {
    const i = item(doc, 'stream-retention', `queue ${q('events-kept')}`);
    expect([i.status, i.message, i.fix]).toEqual(['pass', 'retention: max-age 7D', null]);
  });

  it('unacked: a consumer holding messages without acking them', async () => {
    const conn = await amqp.connect(AMQP_URLS[0]!);
    try {
      const ch = await conn.createConfirmChannel();
      for (let i = 0; i < 3; i++) ch.sendToQueue(q('busy'), Buffer.from(`m${i}`), { persistent: true });
      await ch.waitForConfirms();
      await ch.prefetch(10);
      const got: amqp.ConsumeMessage[] = [];
      await ch.consume(q('busy'), (m) => void (m && got.push(m)), { noAck: false });
      await eventually(async () => expect(got).toHaveLength(3), 15_000);
      const busy = await eventually(
        async () => {
          const { doc: d } = await audit(['--max-unacked', '3']);
          const i = item(d, 'unacked', `queue ${q('busy')}`);
          expect(i.status).toBe('warn');
          return i;
        },
        30_000,
        1_000,
      );
      expect(busy.message).toMatch(/^3 unacked messages \(limit 3\)/);
      // The same 3 within the one consumer's prefetch (10): explained, by the broker's own figures,
      // once the queue's statistics count the consumer (they are refreshed every 5 s, the unacked
      // count and the consumer count not always in the same refresh; until then the item says it
      // cannot judge).
      await eventually(
        async () => {
          const explained = item((await audit()).doc, 'unacked-unexplained', `queue ${q('busy')}`);
          expect([explained.status, explained.message]).toEqual(['pass', '3 unacked messages, within the prefetch of 1 consumer (10)']);
        },
        30_000,
        1_000,
      );
    } finally {
      await conn.close();
    }
  });

  it('unroutable-dropped: 3 messages published without mandatory to an exchange with no binding are dropped, and counted', async () => {
    const x = q('unroutable-x');
    const before = await droppedUnroutable();
    // The overview's counts lag by a statistics interval (about 5 s). The counter is the cluster's,
    // so another publisher could add to it: at least our 3, and exactly our 3 reached the exchange.
    // The channel stays open until they are counted: a CI run once saw a channel closed at once never
    // counted in 30 s (a guess: the management collector missed the closed channel's per-channel counts).
    const counted = await withChannel(async (ch) => {
      await ch.assertExchange(x, 'direct', { durable: true });
      // Not mandatory, no alternate exchange, nothing bound: the broker confirms each one and drops it.
      for (let i = 0; i < 3; i++) ch.publish(x, q('bound-to-nothing'), Buffer.from(`lost ${i}`), { persistent: true, mandatory: false });
      await ch.waitForConfirms();
      return eventually(
        async () => {
          const now = await droppedUnroutable();
          expect(now).toBeGreaterThanOrEqual(before + 3);
          return now;
        },
        30_000,
        500,
      );
    });
    await eventually(async () => {
      const e = await mgmtGet<{ message_stats?: { publish_in?: number } }>(`/api/exchanges/%2F/${encodeURIComponent(x)}`);
      expect(e.message_stats?.publish_in).toBe(3);
    }, 15_000);
    expect(await mgmtGet<unknown[]>(`/api/exchanges/%2F/${encodeURIComponent(x)}/bindings/source`)).toEqual([]);

    const r = await audit();
    const after = await droppedUnroutable();
    expect(r.exitCode, r.stderr).toBe(1);
    const i = clusterItem(r.doc, 'unroutable-dropped');
    expect(i.status).toBe('fail');
    // The audit read the counter after `counted` and before `after`; it only grows.
    const n = droppedIn(i.message);
    expect(n).toBeGreaterThanOrEqual(counted);
    expect(n).toBeLessThanOrEqual(after);
    expect(i.message).toMatch(/ a publisher used neither mandatory nor an alternate exchange, and no binding matched$/);
    expect(i.fix).toBe(
      'publish with mandatory (and handle basic.return) or give the exchange an alternate-exchange; find the publisher with a routing key that matches no binding',
    );
  });

  it('classic mirroring: RabbitMQ 4.3 refuses an ha-* policy outright, so the check can only fail on 3.x', async () => {
    expect(await mgmt('PUT', `/api/policies/%2F/${P}-ha`, { pattern: `^${re}\\.classic$`, 'apply-to': 'queues', definition: { 'ha-mode': 'all' } })).toBe(400);
    expect(item(doc, 'mirroring-policy', 'policies').status).toBe('pass');
  });

  it('the loss retry-loop warns about is real: past its delivery limit, a message dies in the loop', async () => {
    await withChannel(async (ch) => {
      ch.sendToQueue(q('work'), Buffer.from('poison'), { persistent: true, messageId: 'poison' });
      await ch.waitForConfirms();
    });
    const conn = await amqp.connect(AMQP_URLS[0]!);
    try {
      // Two consumers that crash (their channel closes with the message unacked): delivery-limit 1 is exceeded.
      for (let attempt = 0; attempt < 2; attempt++) {
        const ch = await conn.createChannel();
        const m = await eventually(
          async () => {
            const got = await ch.get(q('work'), { noAck: false });
            expect(got).not.toBe(false);
            return got as amqp.GetMessage;
          },
          15_000,
          100,
        );
        expect(m.properties.messageId).toBe('poison');
        await ch.close();
      }
      const probe = await conn.createChannel();
      // Dead-lettered (delivery_limit) into the TTL queue...
      await eventually(async () => expect((await probe.checkQueue(q('wait'))).messageCount).toBe(1), 15_000, 100);
      // ...and when it expires back towards the work queue, RabbitMQ drops it: no queue has it.
      await eventually(async () => expect((await probe.checkQueue(q('wait'))).messageCount).toBe(0), 15_000, 100);
      // A control message takes the same path, rejected instead (a cycle with a rejection is
      // not dropped): it comes back to the work queue. The poison expired before it, so had it
      // come back it would be there first.
      probe.sendToQueue(q('work'), Buffer.from('control'), { persistent: true, messageId: 'control' });
      const control = await eventually(
        async () => {
          const got = await probe.get(q('work'), { noAck: false });
          expect(got).not.toBe(false);
          return got as amqp.GetMessage;
        },
        15_000,
        100,
      );
      expect(control.properties.messageId).toBe('control');
      probe.nack(control, false, false);
      const back = await eventually(
        async () => {
          const got = await probe.get(q('work'), { noAck: true });
          expect(got).not.toBe(false);
          return got as amqp.GetMessage;
        },
        15_000,
        100,
      );
      expect(back.properties.messageId).toBe('control');
      expect(back.properties.headers?.['x-death']).toEqual(expect.arrayContaining([expect.objectContaining({ reason: 'rejected' })]));
      expect((await probe.checkQueue(q('work'))).messageCount).toBe(0);
    } finally {
      await conn.close();
    }
  });
});
