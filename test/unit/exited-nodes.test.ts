import { describe, expect, it } from 'vitest';
import { demuxLog, exitReason, planExited, STARTS_PER_NODE } from '../../src/cluster/lifecycle/exited-nodes.js';

describe('planExited: an exited node is started again, a few times', () => {
  it.each([
    { exited: [], starts: {}, start: [], gaveUp: undefined },
    { exited: ['r3'], starts: {}, start: ['r3'], gaveUp: undefined },
    { exited: ['r3'], starts: { r3: 1 }, start: ['r3'], gaveUp: undefined },
    { exited: ['r3'], starts: { r3: STARTS_PER_NODE }, start: [], gaveUp: 'r3' },
    { exited: ['r1', 'r3'], starts: { r3: STARTS_PER_NODE, r1: 0 }, start: [], gaveUp: 'r3' },
    { exited: ['r1', 'r2'], starts: { r3: STARTS_PER_NODE }, start: ['r1', 'r2'], gaveUp: undefined },
  ])('exited $exited, started before $starts: start $start, give up on $gaveUp', ({ exited, starts, start, gaveUp }) => {
    expect(planExited(exited, new Map(Object.entries(starts)))).toEqual({ start, gaveUp });
  });
});

describe('exitReason: the line that says why a node stopped', () => {
  it.each([
    ['', undefined],
    ['a\nb\n', 'b'],
    [
      '2026 [info] <0.1.0> Waiting for Mnesia tables for 30000 ms, 0 retries left\n2026 [error] <0.2.0> BOOT FAILED\nStopping\n',
      '2026 [error] <0.2.0> BOOT FAILED',
    ],
    ['x [error] one\ny [info] ok\nz {error,{inconsistent_cluster,"Node rabbit1 thinks..."}}\nbye', 'z {error,{inconsistent_cluster,"Node rabbit1 thinks..."}}'],
  ])('%j → %j', (log, line) => {
    expect(exitReason(log)).toBe(line);
  });

  it('cuts a long line to 200 characters', () => {
    expect(exitReason(`error ${'x'.repeat(400)}`)).toHaveLength(200);
  });
});

describe("demuxLog: docker's framed log as text", () => {
  const frame = (stream: number, text: string): Buffer => {
    const payload = Buffer.from(text);
    const head = Buffer.alloc(8);
    head.writeUInt8(stream, 0);
    head.writeUInt32BE(payload.length, 4);
    return Buffer.concat([head, payload]);
  };

  it('joins stdout and stderr frames in order', () => {
    expect(demuxLog(Buffer.concat([frame(1, 'one\n'), frame(2, 'two\n'), frame(1, 'three\n')]))).toBe('one\ntwo\nthree\n');
  });

  it('passes a log without frames (a TTY) through as it is', () => {
    expect(demuxLog(Buffer.from('plain text log line\n'))).toBe('plain text log line\n');
  });

  it('is empty for an empty log', () => {
    expect(demuxLog(Buffer.alloc(0))).toBe('');
  });
});
