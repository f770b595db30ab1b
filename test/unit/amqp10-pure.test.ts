import { describe, expect, it } from 'vitest';
import { connectionOptions10, queueAddress, targetAddress } from '../../src/client/amqp10/connection.js';
import { OUTCOME_RULES, RejectionTally, outcomeOf, rejectionOf } from '../../src/client/amqp10/outcomes.js';
import { compareModes, isConfirmingMode, modeLabel } from '../../src/scenarios/under-faults/compare-modes.js';

describe('AMQP 1.0 connection options from an amqp:// URL', () => {
  it.each([
    { url: 'amqp://demo:demo@127.0.0.1:5672', expected: { host: '127.0.0.1', port: 5672, username: 'demo', password: 'demo', hostname: 'vhost:/' } },
    { url: 'amqp://demo:demo@127.0.0.1:5672/', expected: { host: '127.0.0.1', port: 5672, username: 'demo', password: 'demo', hostname: 'vhost:/' } },
    { url: 'amqp://u:p%40ss@h/%2F', expected: { host: 'h', port: 5672, username: 'u', password: 'p@ss', hostname: 'vhost:/' } },
    { url: 'amqp://u:p@h:6672/orders', expected: { host: 'h', port: 6672, username: 'u', password: 'p', hostname: 'vhost:orders' } },
    { url: 'amqp://h', expected: { host: 'h', port: 5672, username: 'guest', password: 'guest', hostname: 'vhost:/' } },
    { url: 'amqps://u:p@h', expected: { host: 'h', port: 5671, username: 'u', password: 'p', hostname: 'vhost:/', transport: 'tls', servername: 'h' } },
  ])('$url', ({ url, expected }) => {
    expect(connectionOptions10(url, { idleTimeoutMs: 5000 })).toStrictEqual({ ...expected, reconnect: false, idle_time_out: 5000 });
  });
});

describe("RabbitMQ 4's v2 addresses", () => {
  it.each([
    { exchange: 'demo.orders', key: 'demo.orders', address: '/exchanges/demo.orders/demo.orders' },
    { exchange: '', key: 'q1', address: '/queues/q1' },
    { exchange: 'a b', key: 'k/1', address: '/exchanges/a%20b/k%2F1' },
  ])('$exchange $key → $address', ({ exchange, key, address }) => {
    expect(targetAddress(exchange, key)).toBe(address);
  });
  it('a queue address needs a name', () => {
    expect(() => queueAddress('')).toThrow(/queue name/);
  });
});

describe('publisher outcomes', () => {
  const state = (composite: string, extra: object = {}): unknown => Object.assign(Object.create({ constructor: { composite_type: composite } }), extra);
  it.each([
    ['accepted', 'accepted'],
    ['released', 'released'],
    ['rejected', 'rejected'],
    ['modified', 'modified'],
    ['received', undefined],
  ])('%s → %s', (name, outcome) => {
    expect(outcomeOf(state(name))).toBe(outcome);
  });
  it('no state is no outcome', () => {
    expect(outcomeOf(undefined)).toBeUndefined();
    expect(outcomeOf(null)).toBeUndefined();
  });
  it('what the ledger records: accepted confirms, released returns (not sent again), rejected and modified nack and send again', () => {
    expect(OUTCOME_RULES).toStrictEqual({
      accepted: { flag: 'confirmed', resend: false },
      released: { flag: 'returned', resend: false },
      rejected: { flag: 'nacked', resend: true },
      modified: { flag: 'nacked', resend: true },
    });
  });
  it("a rejection's condition and description; absent ones named", () => {
    expect(rejectionOf({ error: { condition: 'amqp:resource-limit-exceeded', description: "queue 'q' exceeded maximum length" } })).toStrictEqual({
      condition: 'amqp:resource-limit-exceeded',
      description: "queue 'q' exceeded maximum length",
    });
    expect(rejectionOf({})).toStrictEqual({ condition: '(no condition)', description: '' });
  });
  it('rejections tallied, most frequent first', () => {
    const t = new RejectionTally();
    t.add({ condition: 'b', description: 'x' });
    t.add({ condition: 'a', description: 'y' });
    t.add({ condition: 'a', description: 'y' });
    expect(t.list()).toStrictEqual([
      { condition: 'a', description: 'y', count: 2 },
      { condition: 'b', description: 'x', count: 1 },
    ]);
  });
});

describe("compare's sides", () => {
  it.each([
    { protocol: 'amqp091', confirms: 'both', modes: ['confirms-on', 'confirms-off'] },
    { protocol: 'amqp091', confirms: 'on', modes: ['confirms-on'] },
    { protocol: 'amqp10', confirms: 'both', modes: ['amqp10-outcomes', 'amqp10-presettled'] },
    { protocol: 'amqp10', confirms: 'off', modes: ['amqp10-presettled'] },
    { protocol: 'both', confirms: 'both', modes: ['confirms-on', 'confirms-off', 'amqp10-outcomes', 'amqp10-presettled'] },
    { protocol: 'both', confirms: 'on', modes: ['confirms-on', 'amqp10-outcomes'] },
  ] as const)('--protocol $protocol --confirms $confirms', ({ protocol, confirms, modes }) => {
    expect(compareModes(protocol, confirms)).toStrictEqual(modes);
  });
  it('which sides claim no confirmed loss; an unknown name claims nothing', () => {
    expect(['confirms-on', 'confirms-off', 'amqp10-outcomes', 'amqp10-presettled', 'other', 3].map(isConfirmingMode)).toStrictEqual([
      true,
      false,
      true,
      false,
      false,
      false,
    ]);
    expect(modeLabel('amqp10-presettled')).toBe('1.0 pre-settled');
  });
});
