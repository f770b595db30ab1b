import { describe, expect, it } from 'vitest';
import { IllegalTransitionError, RelayBook, stateAfterRestart, transition, type RelayEvent, type RowState } from '../../src/client/outbox-relay.js';

describe('outbox relay: the state machine, as a table', () => {
  // Every (state, event) pair: the state it leads to, or null for an illegal transition.
  const cases: { from: RowState; event: RelayEvent; to: RowState | null }[] = [
    { from: 'pending', event: 'publish', to: 'in_flight' },
    { from: 'pending', event: 'ack', to: 'published' }, // a late confirm of an earlier publish
    { from: 'pending', event: 'nack', to: 'pending' },
    { from: 'pending', event: 'timeout', to: 'pending' },
    { from: 'pending', event: 'connection-lost', to: 'pending' },
    { from: 'pending', event: 'restart', to: 'pending' },
    { from: 'in_flight', event: 'publish', to: null }, // never twice at once
    { from: 'in_flight', event: 'ack', to: 'published' },
    { from: 'in_flight', event: 'nack', to: 'pending' },
    { from: 'in_flight', event: 'timeout', to: 'pending' },
    { from: 'in_flight', event: 'connection-lost', to: 'pending' },
    { from: 'in_flight', event: 'restart', to: 'pending' },
    { from: 'published', event: 'publish', to: null }, // published is final
    { from: 'published', event: 'ack', to: 'published' },
    { from: 'published', event: 'nack', to: 'published' },
    { from: 'published', event: 'timeout', to: 'published' },
    { from: 'published', event: 'connection-lost', to: 'published' },
    { from: 'published', event: 'restart', to: 'published' },
  ];

  it.each(cases)('$from --$event--> $to', ({ from, event, to }) => {
    if (to === null) {
      expect(() => transition(from, event, 7)).toThrow(IllegalTransitionError);
      expect(() => transition(from, event, 7)).toThrow(`'${event}' is not allowed for a row that is ${from} (sequence 7)`);
    } else {
      expect(transition(from, event)).toBe(to);
    }
  });

  it('covers every state and event', () => {
    expect(new Set(cases.map((c) => `${c.from}/${c.event}`)).size).toBe(18);
  });

  it('after a restart only what the table stores counts: pending stays pending, published stays published', () => {
    expect(stateAfterRestart('pending')).toBe('pending');
    expect(stateAfterRestart('published')).toBe('published');
  });
});

describe('RelayBook: one life of the relay', () => {
  it('pending → in flight → published', () => {
    const b = new RelayBook();
    expect(b.stateOf(0)).toBe('pending');
    b.publish(0, 1, 100);
    expect(b.stateOf(0)).toBe('in_flight');
    expect(b.inFlight).toBe(1);
    expect(b.ack(0)).toBe('in_flight');
    expect(b.stateOf(0)).toBe('published');
    expect(b.inFlight).toBe(0);
    expect(b.published).toBe(1);
    expect(() => b.publish(0, 1, 200)).toThrow(IllegalTransitionError);
  });

  it('in flight → pending after a reconnect: only the rows of the lost connection', () => {
    const b = new RelayBook();
    b.publish(0, 1, 0);
    b.publish(1, 1, 0);
    b.publish(2, 2, 0);
    expect(b.connectionLost(1)).toEqual([0, 1]);
    expect([b.stateOf(0), b.stateOf(1), b.stateOf(2)]).toEqual(['pending', 'pending', 'in_flight']);
    // Published again on the new connection.
    b.publish(0, 2, 10);
    expect(b.stateOf(0)).toBe('in_flight');
    expect(b.connectionLost(1)).toEqual([]);
  });

  it('a late ack after the row went back to pending still publishes it (reported as from pending)', () => {
    const b = new RelayBook();
    b.publish(5, 1, 0);
    b.connectionLost(1);
    expect(b.ack(5)).toBe('pending');
    expect(b.stateOf(5)).toBe('published');
  });

  it('a nack puts back only the publish it answers', () => {
    const b = new RelayBook();
    b.publish(3, 1, 0);
    expect(b.nack(3, 2)).toBe(false); // a nack from another connection's publish
    expect(b.stateOf(3)).toBe('in_flight');
    expect(b.nack(3, 1)).toBe(true);
    expect(b.stateOf(3)).toBe('pending');
    expect(b.nack(3, 1)).toBe(false);
  });

  it('confirm timeouts: rows older than the timeout go back to pending, the others stay', () => {
    const b = new RelayBook();
    b.publish(0, 1, 0);
    b.publish(1, 1, 400);
    b.publish(2, 1, 900);
    expect(b.timeouts(1_000, 500)).toEqual([0, 1]);
    expect([b.stateOf(0), b.stateOf(1), b.stateOf(2)]).toEqual(['pending', 'pending', 'in_flight']);
    expect(b.timeouts(1_000, 500)).toEqual([]);
  });

  it('an ack for a published row is harmless; a second publish of an in-flight row is refused', () => {
    const b = new RelayBook();
    b.publish(9, 1, 0);
    expect(() => b.publish(9, 1, 1)).toThrow("'publish' is not allowed for a row that is in_flight (sequence 9)");
    b.ack(9);
    expect(b.ack(9)).toBe('published');
    expect(b.published).toBe(1);
  });
});
