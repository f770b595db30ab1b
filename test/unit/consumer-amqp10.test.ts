import { EventEmitter } from 'node:events';
import type { Connection, Receiver } from 'rhea';
import { describe, expect, it } from 'vitest';
import { messageIdOf } from '../../src/client/amqp10/consumer10.js';
import { FAILURE_SETTLEMENTS10 } from '../../src/client/amqp10/consumer-failures10.js';
import { ReceiveLink } from '../../src/client/amqp10/receive-link.js';
import type { ConsumerCliOptions } from '../../src/cli/commands/consumer.js';
import { ALL_FAILURE_ACTIONS, FAILURE_ACTIONS, FAILURE_ACTIONS10, failureActionRefusal, failureDescription } from '../../src/client/consumer-failures.js';
import { consumer as consumerView } from '../../src/report/kinds/consumer/view.js';
import type { Mismatch } from '../../src/report/shape-check.js';
import { captureOutput, invocationOf, parse } from './program-harness.js';

/**
 * The AMQP 1.0 consumer's pure parts: which --on-failure actions each --protocol takes, the
 * outcome each 1.0 action settles with, the CLI's options, the document's protocol key, and the
 * receiver link's credit (kept at --prefetch as deliveries arrive and are settled).
 */

describe('--on-failure by --protocol', () => {
  it.each([...FAILURE_ACTIONS10.map((a) => ['amqp10', a] as const), ...FAILURE_ACTIONS.map((a) => ['amqp091', a] as const)])(
    '%s takes %s',
    (protocol, action) => {
      expect(failureActionRefusal(protocol, action)).toBeUndefined();
    },
  );

  it.each([
    [
      'amqp10',
      'nack-requeue',
      "--on-failure nack-requeue is --protocol amqp091's; with --protocol amqp10: release, modify, modify-failed, modify-undeliverable, reject, close",
    ],
    [
      'amqp10',
      'reject-drop',
      "--on-failure reject-drop is --protocol amqp091's; with --protocol amqp10: release, modify, modify-failed, modify-undeliverable, reject, close",
    ],
    ['amqp091', 'release', "--on-failure release is --protocol amqp10's; with --protocol amqp091: nack-requeue, nack-drop, reject-requeue, reject-drop, close"],
    [
      'amqp091',
      'modify-failed',
      "--on-failure modify-failed is --protocol amqp10's; with --protocol amqp091: nack-requeue, nack-drop, reject-requeue, reject-drop, close",
    ],
    ['amqp091', 'explode', '--on-failure explode is not an action; with --protocol amqp091: nack-requeue, nack-drop, reject-requeue, reject-drop, close'],
  ] as const)('%s refuses %s in one line', (protocol, action, line) => {
    expect(failureActionRefusal(protocol, action)).toBe(line);
  });

  it('the CLI offers every action of both, each once', () => {
    expect([...ALL_FAILURE_ACTIONS].sort()).toEqual([...new Set([...FAILURE_ACTIONS, ...FAILURE_ACTIONS10])].sort());
    expect(ALL_FAILURE_ACTIONS.filter((a) => a === 'close')).toHaveLength(1);
  });
});

describe('AMQP 1.0 failure actions → outcomes', () => {
  it.each([
    ['release', { outcome: 'released', deliveryFailed: false, undeliverableHere: false, counter: 'nacked' }],
    ['modify', { outcome: 'modified', deliveryFailed: false, undeliverableHere: false, counter: 'nacked' }],
    ['modify-failed', { outcome: 'modified', deliveryFailed: true, undeliverableHere: false, counter: 'nacked' }],
    ['modify-undeliverable', { outcome: 'modified', deliveryFailed: false, undeliverableHere: true, counter: 'nacked' }],
    ['reject', { outcome: 'rejected', deliveryFailed: false, undeliverableHere: false, counter: 'rejected' }],
    ['close', { outcome: null, deliveryFailed: false, undeliverableHere: false, counter: null }],
  ] as const)('%s', (action, settlement) => {
    expect(FAILURE_SETTLEMENTS10[action]).toEqual(settlement);
  });

  it("close is described in the protocol's terms", () => {
    expect(failureDescription('amqp10', 'close')).toContain('unsettled');
    expect(failureDescription('amqp091', 'close')).toContain('without acking');
    expect(failureDescription('amqp10', 'modify-failed')).toContain('delivery_failed=true');
  });
});

describe('consumer --protocol', () => {
  // commander's own output, captured so that the test log stays clean.
  captureOutput();
  const options = async (args: string[]): Promise<ConsumerCliOptions> => (await invocationOf(['consumer', ...args])).options as ConsumerCliOptions;

  it('amqp091 by default; amqp10 with a 1.0 action', async () => {
    expect((await options([])).protocol).toBe('amqp091');
    const o = await options(['--protocol', 'amqp10', '--on-failure', 'modify-failed', '--fail-first', '2']);
    expect(o.protocol).toBe('amqp10');
    expect(o.failure).toEqual({ action: 'modify-failed', every: undefined, rate: undefined, first: 2 });
  });

  it('amqp10: --prefetch is the credit of a pre-settled link too; without it, unlimited (0)', async () => {
    const o = await options(['--protocol', 'amqp10', '--autoack', '--prefetch', '50']);
    expect({ autoAck: o.autoAck, prefetch: o.prefetch }).toEqual({ autoAck: true, prefetch: 50 });
    expect((await options(['--protocol', 'amqp10', '--autoack'])).prefetch).toBe(0);
    expect((await options(['--protocol', 'amqp10'])).prefetch).toBe(10);
    expect((await options(['--autoack'])).prefetch).toBe(10);
  });

  it.each([
    [['--protocol', 'amqp10', '--on-failure', 'nack-requeue'], /nack-requeue is --protocol amqp091's/],
    [['--on-failure', 'release'], /release is --protocol amqp10's/],
    [['--protocol', 'amqp10', '--autoack', '--multi-ack-every', '3'], /--multi-ack-every does nothing with --autoack/],
    [['--autoack', '--prefetch', '5'], /--prefetch does nothing with --autoack/],
  ])('refuses %j', async (args, message) => {
    const { calls, err } = await parse(['consumer', ...args]);
    expect(calls).toEqual([]);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain('\n');
  });

  it('refuses a protocol it does not know', async () => {
    const { err } = await parse(['consumer', '--protocol', 'amqp11']);
    expect((err as { code?: string }).code).toBe('commander.invalidArgument');
  });
});

describe('the consumer document', () => {
  const problems = (doc: unknown): Mismatch[] => {
    const out: Mismatch[] = [];
    consumerView.shape!.check(doc, '', out);
    return out;
  };

  it('accepts a protocol key, and a document without one', () => {
    expect(problems({ received: 1, processed: 1, protocol: 'amqp10' })).toEqual([]);
    expect(problems({ received: 1, processed: 1, protocol: 'amqp091' })).toEqual([]);
    expect(problems({ received: 1 })).toEqual([]);
  });

  it('refuses a protocol it does not know', () => {
    expect(problems({ protocol: 'amqp11' })).toEqual([{ path: 'protocol', expected: 'amqp091 or amqp10', found: 'a string' }]);
  });
});

describe('messageIdOf', () => {
  it.each([
    [{ message_id: 'r1-7' }, 'r1-7'],
    [{ message_id: 42 }, '42'],
    [{ message_id: Buffer.from([0xab, 0x01]) }, 'ab01'],
    [{}, undefined],
  ])('%j → %s', (message, id) => {
    expect(messageIdOf(message)).toBe(id);
  });
});

/** A receiver that records the credit it is given, and a delivery that records how it was settled. */
class FakeReceiver extends EventEmitter {
  readonly credits: number[] = [];
  add_credit(n: number): void {
    this.credits.push(n);
  }
}

function fakeDelivery(remoteSettled = false): { delivery: { remote_settled: boolean; update(settled: boolean): void; accept(): void }; log: string[] } {
  const log: string[] = [];
  return {
    log,
    delivery: {
      remote_settled: remoteSettled,
      update: (settled) => log.push(`update ${settled}`),
      accept: () => log.push('accept'),
    },
  };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function linkWith(creditWindow: number, preSettled: boolean): { link: ReceiveLink; receiver: FakeReceiver } {
  const receiver = new FakeReceiver();
  const link = new ReceiveLink(new EventEmitter() as unknown as Connection, receiver as unknown as Receiver, 'amqp://h', 0, {
    creditWindow,
    preSettled,
    onDelivery: () => undefined,
  });
  return { link, receiver };
}

describe('ReceiveLink credit: --prefetch outstanding, topped up as deliveries are settled', () => {
  it('manual ack: credit + held unsettled stays at the window', async () => {
    const { link, receiver } = linkWith(10, false);
    link.topUp();
    await turn();
    expect(receiver.credits).toEqual([10]);
    const ds = [fakeDelivery(), fakeDelivery(), fakeDelivery()];
    for (const d of ds) receiver.emit('message', { message: { message_id: 'x' }, delivery: d.delivery });
    await turn();
    // Three held (unsettled), seven of credit: nothing to add.
    expect(receiver.credits).toEqual([10]);
    expect(link.held).toBe(3);
    const first = link.inbox.shift()!;
    link.holdAccept(first.delivery);
    expect(link.flushAccepts()).toBe(1);
    expect(ds[0]!.log).toEqual(['accept']);
    await turn();
    expect(receiver.credits).toEqual([10, 1]);
  });

  it('a run of settlements in one turn costs one flow', async () => {
    const { link, receiver } = linkWith(5, false);
    link.topUp();
    await turn();
    for (let i = 0; i < 5; i++) receiver.emit('message', { message: {}, delivery: fakeDelivery().delivery });
    for (const r of link.inbox.splice(0)) link.holdAccept(r.delivery);
    expect(link.flushAccepts()).toBe(5);
    await turn();
    expect(receiver.credits).toEqual([5, 5]);
  });

  it('pre-settled: settled on arrival, the credit topped up at once', async () => {
    const { link, receiver } = linkWith(4, true);
    link.topUp();
    await turn();
    const d = fakeDelivery(true);
    receiver.emit('message', { message: {}, delivery: d.delivery });
    receiver.emit('message', { message: {}, delivery: fakeDelivery(true).delivery });
    await turn();
    expect(d.log).toEqual(['update true']);
    expect(link.inbox).toHaveLength(2);
    expect(receiver.credits).toEqual([4, 2]);
  });

  it('no credit and no accepts once the link is gone', async () => {
    const { link, receiver } = linkWith(3, false);
    receiver.emit('message', { message: {}, delivery: fakeDelivery().delivery });
    const r = link.inbox.shift()!;
    link.holdAccept(r.delivery);
    link.markClosed('lost');
    expect(link.flushAccepts()).toBe(0);
    link.topUp();
    await turn();
    expect(receiver.credits).toEqual([]);
  });
});
