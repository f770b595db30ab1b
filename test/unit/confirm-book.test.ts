import { describe, expect, it } from 'vitest';
import { ConfirmBook } from '../../src/client/confirm-book.js';
import { Pacer } from '../../src/client/pacer.js';
import type { Clock } from '../../src/util/retry.js';

/** A clock the test moves by hand; sleep() moves it too. */
function fakeClock(startMs = 1_000): Clock & { t: number } {
  const c = {
    t: startMs,
    now: () => c.t,
    sleep: async (ms: number) => {
      c.t += ms;
    },
  };
  return c;
}

type Op =
  | { op: 'publish'; seq: number; atMs: number }
  | { op: 'ack'; tag: number; multiple?: boolean; channel?: number }
  | { op: 'nack'; tag: number; multiple?: boolean }
  | { op: 'timeouts'; nowMs: number; timeoutMs: number }
  | { op: 'lost' }
  | { op: 'open' }
  | { op: 'take' };

/** Runs ops on a fresh book (channel 1 open); each op's outcome, as a string for the table. */
function play(ops: Op[]): { out: string[]; book: ConfirmBook } {
  const book = new ConfirmBook();
  let channel = book.openChannel();
  const out: string[] = [];
  for (const o of ops) {
    switch (o.op) {
      case 'publish':
        out.push(`tag ${book.publish(o.seq, o.atMs)}`);
        break;
      case 'ack': {
        const seen: string[] = [];
        book.ack(o.channel ?? channel, o.tag, o.multiple ?? false, (seq, sentAtMs) => seen.push(sentAtMs === undefined ? `${seq} late` : `${seq}@${sentAtMs}`));
        out.push(`acked [${seen.join(', ')}]`);
        break;
      }
      case 'nack': {
        const seen: number[] = [];
        book.nack(channel, o.tag, o.multiple ?? false, (seq) => seen.push(seq));
        out.push(`nacked [${seen.join(', ')}]`);
        break;
      }
      case 'timeouts':
        out.push(`timed out [${book.timeouts(o.nowMs, o.timeoutMs).join(', ')}]`);
        break;
      case 'lost':
        out.push(`lost [${book.connectionLost().join(', ')}]`);
        break;
      case 'open':
        channel = book.openChannel();
        out.push(`channel ${channel}`);
        break;
      case 'take':
        out.push(`retry ${book.takeRetry()}`);
        break;
    }
  }
  return { out, book };
}

const pub = (seq: number, atMs = 0): Op => ({ op: 'publish', seq, atMs });

describe('ConfirmBook: confirms, nacks, timeouts, lost connections', () => {
  const cases: { name: string; ops: Op[]; out: string[]; inFlight: number; backlog: number[] }[] = [
    {
      name: 'tags 1, 2, 3 in publish order; a single ack',
      ops: [pub(10, 5), pub(11, 6), pub(12, 7), { op: 'ack', tag: 2 }],
      out: ['tag 1', 'tag 2', 'tag 3', 'acked [11@6]'],
      inFlight: 2,
      backlog: [],
    },
    {
      name: 'a multiple ack settles every tag up to it, in order',
      ops: [pub(0, 1), pub(1, 2), pub(2, 3), pub(3, 4), { op: 'ack', tag: 3, multiple: true }],
      out: ['tag 1', 'tag 2', 'tag 3', 'tag 4', 'acked [0@1, 1@2, 2@3]'],
      inFlight: 1,
      backlog: [],
    },
    {
      name: 'a multiple ack skips what a single ack already settled',
      ops: [pub(0), pub(1), pub(2), { op: 'ack', tag: 2 }, { op: 'ack', tag: 3, multiple: true }],
      out: ['tag 1', 'tag 2', 'tag 3', 'acked [1@0]', 'acked [0@0, 2@0]'],
      inFlight: 0,
      backlog: [],
    },
    {
      name: 'a duplicate confirm is ignored',
      ops: [pub(0), pub(1), { op: 'ack', tag: 1 }, { op: 'ack', tag: 1 }, { op: 'ack', tag: 1, multiple: true }],
      out: ['tag 1', 'tag 2', 'acked [0@0]', 'acked []', 'acked []'],
      inFlight: 1,
      backlog: [],
    },
    {
      name: 'an ack for a tag never published is ignored',
      ops: [pub(0), { op: 'ack', tag: 9 }, { op: 'ack', tag: 0 }],
      out: ['tag 1', 'acked []', 'acked []'],
      inFlight: 1,
      backlog: [],
    },
    {
      name: 'a nack: visited and settled, not put in the backlog (the refusal policy brings it back)',
      ops: [pub(5), pub(3), { op: 'lost' }, { op: 'open' }, pub(9), { op: 'nack', tag: 1 }],
      out: ['tag 1', 'tag 2', 'lost [5, 3]', 'channel 2', 'tag 1', 'nacked [9]'],
      inFlight: 0,
      backlog: [3, 5],
    },
    {
      name: 'a multiple nack, then a late ack for a nacked tag is ignored',
      ops: [pub(0), pub(1), pub(2), { op: 'nack', tag: 2, multiple: true }, { op: 'ack', tag: 1 }],
      out: ['tag 1', 'tag 2', 'tag 3', 'nacked [0, 1]', 'acked []'],
      inFlight: 1,
      backlog: [],
    },
    {
      name: 'timeout sweep at a given now: only those timeoutMs old or older, oldest first',
      ops: [pub(0, 100), pub(1, 200), pub(2, 300), { op: 'timeouts', nowMs: 1_200, timeoutMs: 1_000 }],
      out: ['tag 1', 'tag 2', 'tag 3', 'timed out [0, 1]'],
      inFlight: 1,
      backlog: [0, 1],
    },
    {
      name: 'timeout sweep: nothing old enough',
      ops: [pub(0, 100), { op: 'timeouts', nowMs: 1_099, timeoutMs: 1_000 }, { op: 'timeouts', nowMs: 1_100, timeoutMs: 1_000 }],
      out: ['tag 1', 'timed out []', 'timed out [0]'],
      inFlight: 0,
      backlog: [0],
    },
    {
      name: 'timeout sweep skips what was acked, and sorts the backlog',
      ops: [pub(7, 0), pub(2, 0), pub(4, 0), { op: 'ack', tag: 2 }, { op: 'timeouts', nowMs: 50, timeoutMs: 10 }],
      out: ['tag 1', 'tag 2', 'tag 3', 'acked [2@0]', 'timed out [7, 4]'],
      inFlight: 0,
      backlog: [4, 7],
    },
    {
      name: 'a late ack after a timeout still says which sequence (it stays in the backlog)',
      ops: [pub(0, 0), pub(1, 0), { op: 'timeouts', nowMs: 10, timeoutMs: 10 }, { op: 'ack', tag: 2, multiple: true }],
      out: ['tag 1', 'tag 2', 'timed out [0, 1]', 'acked [0 late, 1 late]'],
      inFlight: 0,
      backlog: [0, 1],
    },
    {
      name: 'a late ack for a republished sequence does not settle the republish',
      ops: [pub(0, 0), { op: 'timeouts', nowMs: 10, timeoutMs: 10 }, { op: 'take' }, pub(0, 20), { op: 'ack', tag: 1 }, { op: 'ack', tag: 2 }],
      out: ['tag 1', 'timed out [0]', 'retry 0', 'tag 2', 'acked [0 late]', 'acked [0@20]'],
      inFlight: 0,
      backlog: [],
    },
    {
      name: 'a nack after a timeout: already in the backlog, not twice',
      ops: [pub(0, 0), { op: 'timeouts', nowMs: 10, timeoutMs: 10 }, { op: 'nack', tag: 1 }],
      out: ['tag 1', 'timed out [0]', 'nacked []'],
      inFlight: 0,
      backlog: [0],
    },
    {
      name: 'connection lost: everything in flight to the backlog, sorted in with what was there; a nacked one is not',
      ops: [pub(4), pub(5), { op: 'nack', tag: 1 }, pub(6), pub(2), { op: 'timeouts', nowMs: 0, timeoutMs: 0 }, pub(3), { op: 'lost' }],
      out: ['tag 1', 'tag 2', 'nacked [4]', 'tag 3', 'tag 4', 'timed out [5, 6, 2]', 'tag 5', 'lost [3]'],
      inFlight: 0,
      backlog: [2, 3, 5, 6],
    },
    {
      name: 'acks while the lost channel closes are late acks',
      ops: [pub(0, 3), pub(1, 4), { op: 'lost' }, { op: 'ack', tag: 2, multiple: true }],
      out: ['tag 1', 'tag 2', 'lost [0, 1]', 'acked [0 late, 1 late]'],
      inFlight: 0,
      backlog: [0, 1],
    },
    {
      name: 'a new channel: tags from 1 again; acks for the old channel are ignored',
      ops: [pub(0), { op: 'lost' }, { op: 'open' }, { op: 'take' }, pub(0, 9), { op: 'ack', tag: 1, channel: 1 }, { op: 'ack', tag: 1 }],
      out: ['tag 1', 'lost [0]', 'channel 2', 'retry 0', 'tag 1', 'acked []', 'acked [0@9]'],
      inFlight: 0,
      backlog: [],
    },
  ];

  it.each(cases)('$name', ({ ops, out, inFlight, backlog }) => {
    const r = play(ops);
    expect(r.out).toEqual(out);
    expect(r.book.inFlight).toBe(inFlight);
    expect(r.book.backlog()).toEqual(backlog);
  });
});

describe('ConfirmBook: the window', () => {
  it.each([
    { name: 'empty', published: 0, acked: 0, window: 1, room: true },
    { name: 'sync: one out, full', published: 1, acked: 0, window: 1, room: false },
    { name: 'one short of full', published: 255, acked: 0, window: 256, room: true },
    { name: 'full', published: 256, acked: 0, window: 256, room: false },
    { name: 'full, then one acked', published: 256, acked: 1, window: 256, room: true },
  ])('$name', ({ published, acked, window, room }) => {
    const book = new ConfirmBook();
    const ch = book.openChannel();
    for (let seq = 0; seq < published; seq++) book.publish(seq, seq);
    if (acked > 0) book.ack(ch, acked, true, () => undefined);
    expect(book.hasRoom(window)).toBe(room);
    expect(book.inFlight).toBe(published - acked);
  });

  it('timed out and lost publishes do not count against the window', () => {
    const book = new ConfirmBook();
    book.openChannel();
    book.publish(0, 0);
    book.publish(1, 100);
    expect(book.hasRoom(2)).toBe(false);
    expect(book.timeouts(50, 50)).toEqual([0]);
    expect(book.hasRoom(2)).toBe(true);
    book.connectionLost();
    expect(book.inFlight).toBe(0);
  });

  it('grows past its initial ring, keeping every tag', () => {
    const book = new ConfirmBook();
    const ch = book.openChannel();
    const n = 5_000;
    for (let seq = 0; seq < n; seq++) book.publish(seq * 2, seq);
    // A hole at the front keeps the ring from moving on while it grows.
    const seen: number[] = [];
    book.ack(ch, n, true, (seq) => seen.push(seq));
    expect(seen).toEqual(Array.from({ length: n }, (_, i) => i * 2));
    expect(book.inFlight).toBe(0);
    expect(book.lastTag).toBe(n);
  });

  it('wraps around its ring: publish and ack forever in a small window', () => {
    const book = new ConfirmBook();
    const ch = book.openChannel();
    let acked = 0;
    for (let seq = 0; seq < 10_000; seq++) {
      book.publish(seq, seq);
      if (seq >= 100) book.ack(ch, seq - 99, false, (s) => (acked += s === seq - 100 ? 1 : 1_000_000));
    }
    expect(acked).toBe(9_900);
    expect(book.inFlight).toBe(100);
  });

  it('the backlog: taken smallest first, put back to the front, a failed publish sorted in', () => {
    const book = new ConfirmBook();
    book.openChannel();
    book.publish(8, 0);
    book.publish(3, 0);
    book.connectionLost();
    expect(book.takeRetry()).toBe(3);
    book.putBack(3);
    book.retry(5);
    expect(book.backlog()).toEqual([3, 5, 8]);
    expect(book.retrying).toBe(3);
  });
});

describe('Pacer (injected clock)', () => {
  it.each([
    { name: 'no rate: never waits', rate: 0, sends: [0, 0, 0], waits: [0, 0, 0] },
    { name: '10/s: 100 ms apart', rate: 10, sends: [0, 0, 0], waits: [0, 100, 100] },
    { name: 'behind by a lot: one interval of catch-up, not a burst', rate: 10, sends: [0, 1_000, 0, 0], waits: [0, 0, 0, 100] },
  ])('$name', async ({ rate, sends, waits }) => {
    const clock = fakeClock();
    const pacer = new Pacer(rate, clock);
    const got: number[] = [];
    for (const gapMs of sends) {
      clock.t += gapMs;
      const before = clock.t;
      await pacer.pace(new AbortController().signal);
      got.push(clock.t - before);
    }
    expect(got).toEqual(waits);
  });

  it('waitMs and sent are the arithmetic', () => {
    const pacer = new Pacer(4, fakeClock(0));
    expect(pacer.waitMs(0)).toBe(0);
    pacer.sent(0);
    expect(pacer.waitMs(100)).toBe(150);
    pacer.sent(250);
    expect(pacer.waitMs(250)).toBe(250);
  });
});
