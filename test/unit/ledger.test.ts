import { describe, expect, it } from 'vitest';
import { DataError, ExitCode } from '../../src/errors.js';
import {
  Flag,
  Ledger,
  MAX_PUBLISH_COUNT,
  MAX_READ_COUNT,
  UNEXPECTED_SAMPLE_LIMIT,
  messageId,
  parseMessageId,
  type FlagName,
  type LedgerDocument,
} from '../../src/ledger/ledger.js';

function attempted(runId: string, n: number): Ledger {
  const ledger = new Ledger({ runId });
  for (let seq = 0; seq < n; seq++) ledger.attempt(seq);
  return ledger;
}

describe('messageId / parseMessageId', () => {
  it.each([
    ['run-0', { runId: 'run', seq: 0 }],
    ['run-42', { runId: 'run', seq: 42 }],
    ['a-b-7', { runId: 'a-b', seq: 7 }],
    ['run--1', { runId: 'run-', seq: 1 }],
    ['x-9007199254740991', { runId: 'x', seq: Number.MAX_SAFE_INTEGER }],
  ])('%s parses from the last dash', (id, expected) => {
    expect(parseMessageId(id)).toEqual(expected);
  });

  it.each(['abc', 'run-', '-5', '', 'run-007', 'run-1e3', 'run-+1', 'run- 1', 'run-1.5', 'run-0x10', 'run-9007199254740992', 'run-12345678901234567890'])(
    '%j is not a message id',
    (id) => {
      expect(parseMessageId(id)).toBeUndefined();
    },
  );

  it.each([
    ['r', 0],
    ['r', 123_456],
    ['my-run', 5],
    ['ends-', 3],
  ])('messageId(%j, %d) round-trips', (runId, seq) => {
    expect(parseMessageId(messageId(runId, seq))).toEqual({ runId, seq });
  });

  it.each([
    ['run', -1],
    ['run', 1.5],
    ['run', Number.NaN],
    ['run', 2 ** 53],
    ['', 1],
  ])('messageId(%j, %d) throws', (runId, seq) => {
    expect(() => messageId(runId, seq)).toThrow(RangeError);
  });
});

describe('Ledger flags', () => {
  const marks: [FlagName, (l: Ledger, seq: number) => void][] = [
    ['written', (l, s) => l.written(s)],
    ['confirmed', (l, s) => l.confirm(s)],
    ['nacked', (l, s) => l.nack(s)],
    ['returned', (l, s) => l.returned(s)],
    ['indeterminate', (l, s) => l.indeterminate(s)],
    ['republished', (l, s) => l.republish(s)],
  ];

  it.each(marks)('%s sets its own bit and no other', (name, mark) => {
    const ledger = attempted('run', 3);
    mark(ledger, 1);
    expect(ledger.has(1, name)).toBe(true);
    expect(ledger.flagsOf(1)).toBe(Flag.attempted | Flag[name]);
    expect(ledger.flagsOf(0)).toBe(Flag.attempted);
    expect(ledger.flagsOf(2)).toBe(Flag.attempted);
  });

  it.each(marks)('%s on a sequence never attempted throws', (_name, mark) => {
    const ledger = new Ledger({ runId: 'run' });
    ledger.attempt(0);
    ledger.attempt(2);
    expect(() => mark(ledger, 1)).toThrow(RangeError);
    expect(() => mark(ledger, 3)).toThrow(RangeError);
    expect(ledger.flagsOf(1)).toBe(0);
  });

  it('bits are sticky and combine', () => {
    const ledger = attempted('run', 1);
    ledger.written(0);
    ledger.indeterminate(0);
    ledger.republish(0);
    ledger.written(0);
    ledger.confirm(0);
    for (const name of ['attempted', 'written', 'indeterminate', 'republished', 'confirmed'] as const) expect(ledger.has(0, name)).toBe(true);
    for (const name of ['nacked', 'returned'] as const) expect(ledger.has(0, name)).toBe(false);
  });

  it('attempted is the highest attempted sequence + 1', () => {
    const ledger = new Ledger({ runId: 'run' });
    expect(ledger.attempted).toBe(0);
    ledger.attempt(4);
    expect(ledger.attempted).toBe(5);
    ledger.attempt(2);
    expect(ledger.attempted).toBe(5);
    expect(ledger.has(3, 'attempted')).toBe(false);
  });

  it.each([-1, 1.5, Number.NaN, 2 ** 31])('attempt(%d) throws', (seq) => {
    expect(() => new Ledger({ runId: 'run' }).attempt(seq)).toThrow(RangeError);
  });

  it.each([{ runId: '' }, { runId: 'r', capacity: -1 }, { runId: 'r', capacity: 2.5 }])('new Ledger(%j) throws', (options) => {
    expect(() => new Ledger(options)).toThrow(RangeError);
  });
});

describe('publish counts', () => {
  it('attempt counts 1, each republish one more', () => {
    const ledger = attempted('run', 2);
    expect(ledger.publishCount(0)).toBe(1);
    expect(ledger.has(0, 'republished')).toBe(false);
    ledger.republish(0);
    ledger.republish(0);
    expect(ledger.publishCount(0)).toBe(3);
    expect(ledger.publishCount(1)).toBe(1);
    expect(ledger.publishCount(7)).toBe(0);
  });

  it('attempting again counts as a republish', () => {
    const ledger = attempted('run', 1);
    ledger.attempt(0);
    expect(ledger.publishCount(0)).toBe(2);
    expect(ledger.has(0, 'republished')).toBe(true);
  });

  it(`saturates at ${MAX_PUBLISH_COUNT}`, () => {
    const ledger = attempted('run', 1);
    for (let i = 0; i < 300; i++) ledger.republish(0);
    expect(ledger.publishCount(0)).toBe(MAX_PUBLISH_COUNT);
  });
});

describe('reads', () => {
  it('counts reads of our ids per sequence', () => {
    const ledger = attempted('run', 3);
    expect(ledger.recordRead('run-1')).toBe('ours');
    expect(ledger.recordRead('run-1')).toBe('ours');
    expect(ledger.recordReadSeq(2)).toBe('ours');
    expect([ledger.readCount(0), ledger.readCount(1), ledger.readCount(2)]).toEqual([0, 2, 1]);
    expect(ledger.readTotal).toBe(3);
    expect(ledger.unexpected).toBe(0);
  });

  it('a runId with dashes in it reads as ours', () => {
    const ledger = attempted('2024-06-01-a', 2);
    expect(ledger.recordRead('2024-06-01-a-1')).toBe('ours');
    expect(ledger.readCount(1)).toBe(1);
  });

  const unexpectedIds: [string, string | undefined][] = [
    ['another runId', 'other-1'],
    ['a runId that only shares a prefix', 'runx-1'],
    ['a longer runId ending in ours', 'xrun-1'],
    ['a sequence beyond attempted', 'run-3'],
    ['a sequence in a gap (never attempted)', 'run-5'],
    ['garbage without a dash', 'abc'],
    ['an empty sequence', 'run-'],
    ['a double dash (run "run-", seq 1)', 'run--1'],
    ['a negative-looking sequence', 'run--0'],
    ['leading zeros', 'run-01'],
    ['an empty string', ''],
    ['no message_id', undefined],
  ];

  it.each(unexpectedIds)('%s is unexpected', (_what, id) => {
    const ledger = attempted('run', 3);
    ledger.attempt(4);
    ledger.attempt(6);
    expect(ledger.recordRead(id)).toBe('unexpected');
    expect(ledger.unexpected).toBe(1);
    expect(ledger.unexpectedSamples).toEqual([id ?? '(no message_id)']);
    expect(ledger.readTotal).toBe(0);
    for (let seq = 0; seq < 8; seq++) expect(ledger.readCount(seq)).toBe(0);
  });

  it.each([3, 5, -1, 1.5, 2 ** 40])('recordReadSeq(%d) beyond or between attempted is unexpected', (seq) => {
    const ledger = attempted('run', 3);
    ledger.attempt(6);
    expect(ledger.recordReadSeq(seq)).toBe('unexpected');
    expect(ledger.unexpectedSamples).toEqual([Number.isSafeInteger(seq) && seq >= 0 ? `run-${seq}` : String(seq)]);
    expect(ledger.capacity).toBeLessThan(2 ** 20);
  });

  it(`keeps at most ${UNEXPECTED_SAMPLE_LIMIT} unexpected samples, but counts them all`, () => {
    const ledger = attempted('run', 1);
    for (let i = 0; i < 25; i++) ledger.recordRead(`other-${i}`);
    expect(ledger.unexpected).toBe(25);
    expect(ledger.unexpectedSamples).toHaveLength(UNEXPECTED_SAMPLE_LIMIT);
    expect(ledger.unexpectedSamples[0]).toBe('other-0');
    expect(ledger.unexpectedSamples.at(-1)).toBe(`other-${UNEXPECTED_SAMPLE_LIMIT - 1}`);
  });

  it('cuts a huge unexpected id in the samples', () => {
    const ledger = attempted('run', 1);
    ledger.recordRead('x'.repeat(100_000));
    expect(ledger.unexpectedSamples[0]!.length).toBeLessThan(300);
  });

  it(`saturates a read count at ${MAX_READ_COUNT}, keeps readTotal exact`, () => {
    const ledger = attempted('run', 2);
    for (let i = 0; i < 70_000; i++) ledger.recordReadSeq(0);
    ledger.recordRead('run-1');
    expect(ledger.readCount(0)).toBe(MAX_READ_COUNT);
    expect(ledger.readCount(1)).toBe(1);
    expect(ledger.readTotal).toBe(70_001);
  });
});

describe('growth', () => {
  it('doubles past the initial capacity and keeps what was recorded', () => {
    const ledger = new Ledger({ runId: 'run', capacity: 4 });
    expect(ledger.capacity).toBe(4);
    for (let seq = 0; seq < 4; seq++) {
      ledger.attempt(seq);
      ledger.written(seq);
    }
    ledger.confirm(3);
    ledger.republish(3);
    ledger.recordReadSeq(3);
    for (let seq = 4; seq < 10_000; seq++) ledger.attempt(seq);
    expect(ledger.capacity).toBe(4 * 2 ** 12);
    expect(ledger.attempted).toBe(10_000);
    expect(ledger.flagsOf(3)).toBe(Flag.attempted | Flag.written | Flag.confirmed | Flag.republished);
    expect(ledger.publishCount(3)).toBe(2);
    expect(ledger.readCount(3)).toBe(1);
    expect(ledger.flagsOf(9_999)).toBe(Flag.attempted);
    ledger.recordRead('run-9999');
    expect(ledger.readCount(9_999)).toBe(1);
  });

  it('jumps straight to a far sequence', () => {
    const ledger = new Ledger({ runId: 'run', capacity: 0 });
    ledger.attempt(1_000);
    expect(ledger.capacity).toBeGreaterThanOrEqual(1_001);
    expect(ledger.attempted).toBe(1_001);
    expect(ledger.has(999, 'attempted')).toBe(false);
  });
});

describe('toJSON / fromJSON', () => {
  function sample(): Ledger {
    const ledger = new Ledger({ runId: 'run-x', capacity: 2 });
    for (let seq = 0; seq < 50; seq++) {
      ledger.attempt(seq);
      if (seq % 7 !== 0) ledger.written(seq);
      if (seq % 3 === 0) ledger.confirm(seq);
      if (seq % 5 === 0) ledger.nack(seq);
      if (seq % 11 === 0) ledger.returned(seq);
      if (seq % 4 === 0) {
        ledger.indeterminate(seq);
        for (let i = 0; i < seq; i++) ledger.republish(seq);
      }
      ledger.recordReadSeq(seq);
    }
    return ledger;
  }

  it('round-trips flags and publish counts through JSON text, without reads', () => {
    const original = sample();
    const doc = JSON.parse(JSON.stringify(original)) as LedgerDocument;
    expect(doc).toMatchObject({ schemaVersion: 1, kind: 'ledger', runId: 'run-x', attempted: 50 });
    expect(Buffer.from(doc.flags, 'base64')).toHaveLength(50);
    const copy = Ledger.fromJSON(doc);
    expect(copy.runId).toBe('run-x');
    expect(copy.attempted).toBe(50);
    for (let seq = 0; seq < 50; seq++) {
      expect(copy.flagsOf(seq)).toBe(original.flagsOf(seq));
      expect(copy.publishCount(seq)).toBe(original.publishCount(seq));
      expect(copy.readCount(seq)).toBe(0);
    }
    expect(copy.publishCount(48)).toBe(49);
    expect(copy.readTotal).toBe(0);
    // The copy keeps working: it grows and reads.
    copy.attempt(5_000);
    expect(copy.recordRead('run-x-49')).toBe('ours');
    expect(copy.toJSON().attempted).toBe(5_001);
  });

  it('round-trips an empty ledger', () => {
    const doc = new Ledger({ runId: 'r' }).toJSON();
    expect(doc).toEqual({ schemaVersion: 1, kind: 'ledger', runId: 'r', attempted: 0, flags: '', publishCounts: '' });
    expect(Ledger.fromJSON(doc).attempted).toBe(0);
  });

  const b64 = (...bytes: number[]): string => Buffer.from(bytes).toString('base64');
  const good = (): Record<string, unknown> => ({ ...attempted('run', 3).toJSON() });
  const malformed: [string, unknown, string][] = [
    ['null', null, 'expected an object, got null'],
    ['an array', [], 'expected an object, got an array'],
    ['a string', 'ledger', 'expected an object, got string'],
    ...(['schemaVersion', 'kind', 'runId', 'attempted', 'flags', 'publishCounts'] as const).map((key): [string, unknown, string] => {
      const doc = good();
      delete doc[key];
      return [`no ${key}`, doc, `missing field '${key}'`];
    }),
    ['schemaVersion 2', { ...good(), schemaVersion: 2 }, 'schemaVersion 2 is not supported (expected 1)'],
    ['schemaVersion "1"', { ...good(), schemaVersion: '1' }, 'schemaVersion "1" is not supported'],
    ['another kind', { ...good(), kind: 'compare' }, `kind "compare" is not 'ledger'`],
    ['an empty runId', { ...good(), runId: '' }, 'runId must be a non-empty string'],
    ['a numeric runId', { ...good(), runId: 7 }, 'runId must be a non-empty string'],
    ['negative attempted', { ...good(), attempted: -1 }, 'attempted must be an integer'],
    ['fractional attempted', { ...good(), attempted: 2.5 }, 'attempted must be an integer'],
    ['attempted as a string', { ...good(), attempted: '3' }, 'attempted must be an integer'],
    ['flags not a string', { ...good(), flags: [1, 1, 1] }, 'flags must be a base64 string, got object'],
    ['flags with non-base64 characters', { ...good(), flags: 'AQ!B' }, 'flags is not valid base64'],
    ['flags with a bad base64 length', { ...good(), flags: 'AQEBA' }, 'flags is not valid base64 (5 characters)'],
    ['flags one byte short', { ...good(), flags: b64(1, 1) }, 'flags decodes to 2 bytes, expected 3 (attempted)'],
    ['flags one byte long', { ...good(), flags: b64(1, 1, 1, 1) }, 'flags decodes to 4 bytes, expected 3'],
    ['publishCounts one byte short', { ...good(), publishCounts: b64(1, 1) }, 'publishCounts decodes to 2 bytes, expected 3'],
    ['an unknown flag bit', { ...good(), flags: b64(1, 0x81, 1) }, 'sequence 1 has unknown flag bits 0x81'],
    ['a flag without attempted', { ...good(), flags: b64(1, Flag.confirmed, 1) }, 'sequence 1 has flags 0x4 and publish count 1 but was never attempted'],
    ['an attempted sequence published 0 times', { ...good(), publishCounts: b64(1, 0, 1) }, 'sequence 1 was attempted but its publish count is 0'],
    ['a last sequence never attempted', { ...good(), flags: b64(1, 1, 0), publishCounts: b64(1, 1, 0) }, 'attempted is 3 but sequence 2 was never attempted'],
  ];

  it.each(malformed)('%s is a one-line DataError', (_what, doc, message) => {
    let caught: unknown;
    try {
      Ledger.fromJSON(doc, 'reports/run.json');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(DataError);
    const err = caught as DataError;
    expect(err.exitCode).toBe(ExitCode.dataError);
    expect(err.message.startsWith('reports/run.json: ')).toBe(true);
    expect(err.message).toContain(message);
    expect(err.message).not.toContain('\n');
  });

  it('the well-formed base document of the malformed table is accepted', () => {
    expect(Ledger.fromJSON(good()).attempted).toBe(3);
  });
});
