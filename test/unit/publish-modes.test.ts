import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { propertiesFor } from '../../src/client/amqp091/publish-modes.js';
import { encodePublishedAtUs, PUBLISHED_AT_US_HEADER } from '../../src/measure/published-at.js';

/** amqplib's own encoding of a publish's properties: what goes on the wire (its lib, as publish() calls it). */
const require = createRequire(import.meta.url);
// Its package exports only its API: the files by path.
const lib = path.join(path.dirname(require.resolve('amqplib')), 'lib');
const Args = require(path.join(lib, 'api_args.js')) as { publish(exchange: string, routingKey: string, options: object): object };
const defs = require(path.join(lib, 'defs.js')) as {
  BasicProperties: unknown;
  encodeProperties(p: unknown, channel: number, size: number, fields: object): Buffer;
};
const wire = (options: object): string => defs.encodeProperties(defs.BasicProperties, 1, 100, Args.publish('', 'q', options)).toString('hex');

describe('propertiesFor: one headers object, its values set at each call', () => {
  const opts = { runId: 'r1', persistent: true, mandatory: false, publishedAtUs: true };

  it('lean: message_id, delivery mode and the publish time, encoded as a fresh object per message would be', () => {
    const propertiesOf = propertiesFor({ ...opts, leanProperties: true });
    for (const [seq, atMs] of [
      [0, 1_000.25],
      [1, 1_000.75],
      [4_294_967_296, 2_500.5],
    ] as const) {
      const p = propertiesOf(seq, atMs);
      expect(p).toEqual({ messageId: `r1-${seq}`, persistent: true, mandatory: false, headers: { [PUBLISHED_AT_US_HEADER]: encodePublishedAtUs(atMs) } });
      expect(wire(p)).toBe(wire({ ...p, headers: { [PUBLISHED_AT_US_HEADER]: encodePublishedAtUs(atMs) } }));
    }
  });

  it('full: run, sequence and both publish times; each call overwrites the last one’s headers', () => {
    const propertiesOf = propertiesFor(opts);
    const first = propertiesOf(7, 10);
    const firstHeaders = { ...first.headers };
    expect(firstHeaders).toMatchObject({ 'x-rmq-bench-run': 'r1', 'x-rmq-bench-seq': 7, [PUBLISHED_AT_US_HEADER]: encodePublishedAtUs(10) });
    expect(Object.keys(firstHeaders)).toEqual(['x-rmq-bench-run', 'x-rmq-bench-seq', 'x-rmq-bench-published-at', PUBLISHED_AT_US_HEADER]);
    const second = propertiesOf(8, 20);
    expect(second.headers).toBe(first.headers);
    expect(second.headers).toMatchObject({ 'x-rmq-bench-seq': 8, [PUBLISHED_AT_US_HEADER]: encodePublishedAtUs(20) });
    expect(wire(second)).toBe(wire({ ...second, headers: { ...second.headers } }));
  });

  it('lean without a publish time: no headers', () => {
    expect(propertiesFor({ ...opts, publishedAtUs: false, leanProperties: true })(3, 0)).toEqual({ messageId: 'r1-3', persistent: true, mandatory: false });
  });
});
