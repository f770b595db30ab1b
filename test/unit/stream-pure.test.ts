import { describe, expect, it } from 'vitest';
import { QUEUE_TYPES } from '../../src/cluster/broker/queue-types.js';
import { type AnyProtocol, PUBLISH_PROTOCOLS, queueTypeProblem, traitsOf } from '../../src/client/protocol.js';
import type { StreamPublishCounts } from '../../src/client/publisher-result.js';
import {
  coveredByStored,
  FRAME_HEADROOM_BYTES,
  frameProblem,
  messagesPerFrame,
  parseStreamUrl,
  publisherRefOf,
  publishingIdOf,
  seqOfPublishingId,
} from '../../src/client/stream/stream-ids.js';
import { nextStart } from '../../src/client/stream/stream-session.js';
import { loadConfig, streamUrl } from '../../src/config.js';
import { UsageError } from '../../src/errors.js';
import { modeVerdict, renderTotals } from '../../src/report/kinds/compare/text.js';
import { compareModes, isConfirmingMode, MODE_RULES } from '../../src/scenarios/under-faults/compare-modes.js';
import { protocolTotals } from '../../src/scenarios/under-faults/compare-protocol-totals.js';
import { modeTotals } from './fixtures/runs.js';

/*
 * The pure parts of the native stream protocol's producer (compare --protocol stream): its URLs,
 * its publisher reference and publishing ids, what deduplication covers, the queue types it goes
 * with, compare's side for it, and its rows in compare's table.
 */

describe('stream URLs: one per node, on its stream port', () => {
  it('the config names each node by its stream port (the AMQP port less 120 by default)', () => {
    const c = loadConfig({ RMQ_BENCH_STATE_DIR: '/nonexistent', RMQ_BENCH_AMQP_PORT: '28672' });
    expect(c.nodes.map((n) => streamUrl(c, n))).toEqual([
      'rabbitmq-stream://demo:demo@127.0.0.1:28552/%2F',
      'rabbitmq-stream://demo:demo@127.0.0.1:28553/%2F',
      'rabbitmq-stream://demo:demo@127.0.0.1:28554/%2F',
    ]);
  });

  it.each([
    ['rabbitmq-stream://demo:demo@127.0.0.1:28552/%2F', { hostname: '127.0.0.1', port: 28552, username: 'demo', password: 'demo', vhost: '/' }],
    ['rabbitmq-stream://demo:demo@127.0.0.1:5552', { hostname: '127.0.0.1', port: 5552, username: 'demo', password: 'demo', vhost: '/' }],
    ['rabbitmq-stream://u%40x:p%3Aw@host:5552/orders', { hostname: 'host', port: 5552, username: 'u@x', password: 'p:w', vhost: 'orders' }],
  ])('%s', (url, endpoint) => {
    expect(parseStreamUrl(url)).toEqual(endpoint);
  });

  it.each([
    ['amqp://demo:demo@127.0.0.1:5672', 'is not rabbitmq-stream://'],
    ['rabbitmq-stream://demo:demo@127.0.0.1', 'is not rabbitmq-stream://'],
    ['not a url', 'is not a URL'],
  ])('%s is refused: %s', (url, message) => {
    expect(() => parseStreamUrl(url)).toThrow(UsageError);
    expect(() => parseStreamUrl(url)).toThrow(message);
  });
});

describe('publishing ids and the publisher reference', () => {
  it.each([
    [0, 1n],
    [1, 2n],
    [4_999, 5_000n],
    [2 ** 40, 2n ** 40n + 1n],
  ])('seq %d is publishing id %s, and back', (seq, id) => {
    expect(publishingIdOf(seq)).toBe(id);
    expect(seqOfPublishingId(id)).toBe(seq);
  });

  it('a run has its own reference', () => {
    expect(publisherRefOf('rmxdg605otnih')).toBe('rmq-bench-rmxdg605otnih');
    expect(publisherRefOf('a')).not.toBe(publisherRefOf('b'));
  });

  it.each([
    { name: 'nothing sent again', seqs: [], storedUpTo: 100n, covered: 0 },
    { name: 'the broker stored nothing for the reference yet', seqs: [0, 1, 2], storedUpTo: 0n, covered: 0 },
    { name: 'ids at most the last one stored are covered (seq 9 is id 10)', seqs: [8, 9, 10, 11], storedUpTo: 10n, covered: 2 },
    { name: 'all of them stored already', seqs: [3, 4], storedUpTo: 1_000n, covered: 2 },
    { name: 'none of them stored', seqs: [500, 501], storedUpTo: 500n, covered: 0 },
  ])('coveredByStored: $name', ({ seqs, storedUpTo, covered }) => {
    expect(coveredByStored(seqs, storedUpTo)).toBe(covered);
  });
});

describe('the protocols and the queue types they publish to', () => {
  const cases: { protocol: AnyProtocol; queueType: string; problem: string | undefined }[] = PUBLISH_PROTOCOLS.flatMap((protocol) =>
    QUEUE_TYPES.map((queueType) => ({
      protocol,
      queueType,
      problem:
        protocol === 'stream' && queueType !== 'stream'
          ? `--protocol stream publishes over the native stream protocol, to a stream only: give --queue-type stream (not ${queueType})`
          : undefined,
    })),
  );

  it.each(cases)('$protocol with --queue-type $queueType', ({ protocol, queueType, problem }) => {
    expect(queueTypeProblem(protocol, queueType as (typeof QUEUE_TYPES)[number])).toBe(problem);
  });

  it('the native stream protocol publishes confirmed (async) only, and needs no broker feature beyond the stream plugin', () => {
    expect(traitsOf('stream').publishModes).toEqual(['async']);
    expect(traitsOf('stream').brokerFeature).toBeNull();
  });
});

describe("compare's side over the native stream protocol", () => {
  it.each([
    { protocol: 'stream', confirms: 'both', modes: ['stream-confirms'] },
    { protocol: 'stream', confirms: 'on', modes: ['stream-confirms'] },
    { protocol: 'stream', confirms: 'off', modes: [] },
    { protocol: 'both', confirms: 'both', modes: ['confirms-on', 'confirms-off', 'amqp10-outcomes', 'amqp10-presettled'] },
    { protocol: 'amqp091', confirms: 'on', modes: ['confirms-on'] },
  ] as const)('--protocol $protocol --confirms $confirms: $modes', ({ protocol, confirms, modes }) => {
    expect(compareModes(protocol, confirms)).toEqual(modes);
  });

  it('its claim is the confirmed one, over the stream protocol', () => {
    expect(isConfirmingMode('stream-confirms')).toBe(true);
    expect(MODE_RULES['stream-confirms']).toMatchObject({ protocol: 'stream', publishMode: 'async', confirms: true });
  });

  const counts = (o: Partial<StreamPublishCounts>): StreamPublishCounts => ({
    publisherRef: 'rmq-bench-x',
    confirms: 0,
    errors: 0,
    inDoubtResent: 0,
    resentOnReconnect: 0,
    storedAlready: 0,
    timedOut: 0,
    sessions: 1,
    ...o,
  });

  it.each([
    {
      name: 'the stream side sums its runs',
      mode: 'stream-confirms' as const,
      runs: [
        { stream: counts({ confirms: 5_015, inDoubtResent: 15, resentOnReconnect: 15, storedAlready: 1, sessions: 2 }) },
        { stream: counts({ confirms: 5_000 }) },
      ],
      totals: { stream: { confirms: 10_015, errors: 0, inDoubtResent: 15, resentOnReconnect: 15, storedAlready: 1, timedOut: 0, sessions: 3 } },
    },
    { name: 'an AMQP 0-9-1 side has neither', mode: 'confirms-on' as const, runs: [{}], totals: {} },
  ])('protocolTotals: $name', ({ mode, runs, totals }) => {
    expect(
      protocolTotals(
        mode,
        runs.map((producer) => ({ producer })),
      ),
    ).toEqual(totals);
  });
});

describe("compare's table and verdict with a stream side", () => {
  const stream = modeTotals('stream-confirms', {
    confirmed: 15_000,
    read: 15_000,
    stream: { confirms: 15_040, errors: 0, inDoubtResent: 37, resentOnReconnect: 38, storedAlready: 1, timedOut: 3, sessions: 4 },
  });
  const on = modeTotals('confirms-on', { confirmed: 15_000, read: 15_000 });

  it.each([
    ['in doubt, sent again', '37', '-'],
    ['late confirms, sent again', '3', '-'],
    ['sent again on reconnect', '38', '-'],
    ['of those, stored already', '1', '-'],
  ])('row %s: %s on the stream side, %s on 0-9-1', (label, streamCell, onCell) => {
    const line = renderTotals([stream, on])
      .split('\n')
      .find((l) => l.startsWith(label));
    expect(line?.trim().split(/\s{2,}/)).toEqual([label, streamCell, onCell]);
  });

  it('no stream side: no stream rows', () => {
    expect(renderTotals([on])).not.toContain('sent again');
  });

  it('the verdict says what was sent again and what deduplication dropped', () => {
    expect(modeVerdict(stream)).toBe(
      'stream confirms: 0 of 15000 confirmed messages lost (40 sent again with the same publishing ids; of the 38 a new session sent again, the broker held 1 already and deduplication dropped those copies).',
    );
  });
});

describe('where a new stream session starts', () => {
  it.each([
    { name: 'the first session: where the loop says (the leader)', start: 1, lost: undefined, urls: 3, expected: 1 },
    { name: 'after losing the session on node 2: node 3', start: 1, lost: 1, urls: 3, expected: 2 },
    { name: 'round the list', start: 2, lost: 2, urls: 3, expected: 0 },
    { name: 'the loop moved on already', start: 0, lost: 2, urls: 3, expected: 0 },
    { name: 'one URL: that one', start: 0, lost: 0, urls: 1, expected: 0 },
  ])('$name', ({ start, lost, urls, expected }) => {
    expect(nextStart(start, lost, urls)).toBe(expected);
  });
});

describe('a body that must fit one stream frame', () => {
  const MIB = 1_048_576;
  it.each([
    { body: 100, frameMax: MIB, fits: true },
    { body: MIB - FRAME_HEADROOM_BYTES, frameMax: MIB, fits: true },
    { body: MIB - FRAME_HEADROOM_BYTES + 1, frameMax: MIB, fits: false },
    { body: 2_000_000, frameMax: MIB, fits: false },
    { body: 2_000_000, frameMax: 0, fits: true },
  ])('$body bytes in frames of $frameMax: fits $fits', ({ body, frameMax, fits }) => {
    expect(frameProblem(body, frameMax) === undefined).toBe(fits);
  });
  it('says the size, the limit and the largest that fits', () => {
    expect(frameProblem(2_000_000, MIB)).toBe(
      '-s/--size 2000000 does not fit one stream frame: the broker takes frames of at most 1048576 bytes (stream.frame_max), 1024 of them for the headers; use --size 1047552 or less',
    );
  });
});

describe('messages per publish frame: the library batches by count, the broker limits bytes', () => {
  const MIB = 1_048_576;
  it.each([
    { body: 100, frameMax: MIB, messages: 100 },
    { body: 100_000, frameMax: MIB, messages: 10 },
    { body: 400_000, frameMax: MIB, messages: 2 },
    { body: 500_000, frameMax: MIB, messages: 2 },
    { body: 600_000, frameMax: MIB, messages: 1 },
    { body: MIB - FRAME_HEADROOM_BYTES, frameMax: MIB, messages: 1 },
    { body: 2_000_000, frameMax: 0, messages: 100 },
  ])('$body-byte bodies in frames of $frameMax: $messages a frame', ({ body, frameMax, messages }) => {
    expect(messagesPerFrame(body, frameMax)).toBe(messages);
    if (frameMax > 0) expect(messages * (body + FRAME_HEADROOM_BYTES)).toBeLessThanOrEqual(frameMax);
  });
});
