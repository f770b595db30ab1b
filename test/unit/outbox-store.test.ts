import Database from 'better-sqlite3';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataError } from '../../src/errors.js';
import { openOutbox } from '../../src/store/outbox.js';

let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-bench-outbox-unit-'));
  file = path.join(dir, 'outbox.sqlite');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('outbox store (SQLite, WAL)', () => {
  it('creates the file in WAL mode with synchronous=FULL, and records the run', () => {
    const box = openOutbox(file, { create: { runId: 'r1', count: 5 } });
    try {
      expect(box.meta).toMatchObject({ runId: 'r1', count: 5 });
      expect(box.nextSeq()).toBe(0);
      expect(box.counts()).toEqual({ written: 0, pending: 0, published: 0 });
    } finally {
      box.close();
    }
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      db.close();
    }
  });

  it('append → pending, markPublished → published; the event id is the message id', () => {
    const box = openOutbox(file, { create: { runId: 'r1', count: 5 } });
    try {
      expect(box.append(0, Buffer.from('a'))).toBe('r1-0');
      box.append(1, Buffer.from('b'));
      box.append(2, Buffer.from('c'));
      expect(box.nextSeq()).toBe(3);
      expect(box.pending(2).map((r) => [r.seq, r.id, r.payload.toString()])).toEqual([
        [0, 'r1-0', 'a'],
        [1, 'r1-1', 'b'],
      ]);
      expect(box.pending(10, 0).map((r) => r.seq)).toEqual([1, 2]);
      expect(box.pending(10, 2)).toEqual([]);
      expect(box.hasPending()).toBe(true);
      expect(box.markPublished([0, 2])).toBe(2);
      expect(box.markPublished([0])).toBe(0); // already published: unchanged
      expect(box.pending(10).map((r) => r.seq)).toEqual([1]);
      expect(box.counts()).toEqual({ written: 3, pending: 1, published: 2 });
      expect(box.states()).toEqual([
        { seq: 0, state: 'published' },
        { seq: 1, state: 'pending' },
        { seq: 2, state: 'published' },
      ]);
      expect(box.integrity()).toBe('ok');
    } finally {
      box.close();
    }
  });

  it('an event is written once: the same sequence twice is refused, and so is one beyond the run', () => {
    const box = openOutbox(file, { create: { runId: 'r1', count: 2 } });
    try {
      box.append(0, Buffer.from('a'));
      expect(() => box.append(0, Buffer.from('a'))).toThrow(/UNIQUE|PRIMARY KEY/);
      expect(() => box.append(2, Buffer.from('a'))).toThrow(RangeError);
      expect(box.counts().written).toBe(1);
    } finally {
      box.close();
    }
  });

  it('reopening resumes: same run id, pending rows still pending', () => {
    const a = openOutbox(file, { create: { runId: 'first', count: 3 } });
    a.append(0, Buffer.from('a'));
    a.append(1, Buffer.from('b'));
    a.markPublished([0]);
    a.close();
    const b = openOutbox(file, { create: { runId: 'second', count: 3 } });
    try {
      expect(b.meta.runId).toBe('first');
      expect(b.nextSeq()).toBe(2);
      expect(b.pending(10).map((r) => r.id)).toEqual(['first-1']);
    } finally {
      b.close();
    }
  });

  it('a different event count for an existing outbox is a DataError naming both', () => {
    openOutbox(file, { create: { runId: 'r', count: 3 } }).close();
    expect(() => openOutbox(file, { create: { runId: 'r', count: 4 } })).toThrow(DataError);
    expect(() => openOutbox(file, { create: { runId: 'r', count: 4 } })).toThrow('holds a run of 3 events, not 4');
  });

  it('read-only: reads, refuses writes; a missing file or a foreign database is a DataError', () => {
    const w = openOutbox(file, { create: { runId: 'r', count: 3 } });
    w.append(0, Buffer.from('a'));
    const r = openOutbox(file, { readonly: true });
    try {
      expect(r.counts()).toEqual({ written: 1, pending: 1, published: 0 });
      expect(() => r.markPublished([0])).toThrow('open read-only');
    } finally {
      r.close();
      w.close();
    }
    expect(() => openOutbox(path.join(dir, 'missing.sqlite'), { readonly: true })).toThrow(DataError);
    const other = path.join(dir, 'other.sqlite');
    const db = new Database(other);
    db.exec('CREATE TABLE t (x)');
    db.close();
    expect(() => openOutbox(other)).toThrow('is not an rmq-bench outbox');
  });

  it('a transaction left open by a dead writer leaves no trace: SQLite rolls it back on the next open', () => {
    const box = openOutbox(file, { create: { runId: 'r', count: 10 } });
    box.append(0, Buffer.from('a'));
    box.close();
    // A second connection begins a write and never commits (as if its process died there).
    const db = new Database(file);
    db.exec('BEGIN IMMEDIATE');
    db.prepare("INSERT INTO outbox (seq, id, payload, state, created_at) VALUES (1, 'r-1', x'00', 'pending', 0)").run();
    const reader = openOutbox(file, { readonly: true });
    try {
      expect(reader.counts().written).toBe(1);
    } finally {
      reader.close();
      db.close(); // closing without COMMIT rolls back
    }
    const again = openOutbox(file, { create: { runId: 'r', count: 10 } });
    try {
      expect(again.nextSeq()).toBe(1);
      expect(again.integrity()).toBe('ok');
    } finally {
      again.close();
    }
  });
});
