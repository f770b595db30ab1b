import Database from 'better-sqlite3';
import { readFile } from 'node:fs/promises';
import { expect } from 'vitest';
import { distinct, seqsOf } from './witness.js';

/*
 * What a chaos run must show by what the test reads itself: the consumers' SQLite store with the
 * test's own SQL, and the confirmed ids decoded from --ledger's file. chaos.test.ts (3 nodes) and
 * five-nodes.test.ts (--profile jepsen) check their runs with it.
 */

/** The parts of chaos's JSON document these tests read. */
export interface ChaosJson {
  ok: boolean;
  reasons: string[];
  interrupted: boolean;
  unexpected: number;
  absorbed: number;
  totals: { attempted: number; confirmed: number; read: number; lost: number; duplicated: number };
  control: { attempted: number; written: number; read: number; silentlyLost: number } | null;
  producers: {
    producer: number;
    confirms: boolean;
    queue: string;
    runId: string;
    reconciliation: {
      lost: number;
      silentlyLost: number;
      knownFailed: number;
      indeterminateUnread: number;
      neverWritten: number;
      duplicateDeliveries: number;
      counts: { attempted: number; written: number; readDistinct: number; readTotal: number; confirmed: number };
      order: {
        reads: number;
        outOfOrder: number;
        expected: number;
        unexplained: number;
        largestGap: number;
        samples: number[];
        streams: { queue: string | null; consumer: number | null; reads: number }[];
      };
    };
  }[];
  consumers: { consumer: number; queue: string; processed: number; duplicatesSkipped: number }[];
  drain: { ended: string; waitedMs: number; left: unknown[] } | null;
  faults: {
    index: number;
    kind: string;
    target: string;
    reason: string;
    nodes: string[];
    issuedAtMs: number;
    appliedAtMs: number | null;
    restoredAtMs: number | null;
    wholeAtMs: number | null;
    error: string | null;
  }[];
  availability: { index: number; stallMs: number }[];
  latency: { phase: string; summary: { count: number } }[];
  samples: { tMs: number; written: number; confirmed: number; consumed: number }[];
  queues: { name: string }[];
}

/**
 * The ids a ledger file marks confirmed, decoded here from the documented format (src/ledger's
 * LedgerDocument): `flags` is base64 of one byte per sequence, and bit 2 (value 4) is "the broker
 * acked it". An id is `<runId>-<seq>`.
 */
function confirmedIdsOf(ledger: { runId: string; attempted: number; flags: string }): string[] {
  const bytes = Buffer.from(ledger.flags, 'base64');
  expect(bytes.length).toBe(ledger.attempted);
  const ids: string[] = [];
  for (let seq = 0; seq < bytes.length; seq++) if ((bytes[seq]! & 4) !== 0) ids.push(`${ledger.runId}-${seq}`);
  return ids;
}

interface LedgersFile {
  kind: string;
  producers: { producer: number; queue: string; confirms: boolean; ledger: { runId: string; attempted: number; flags: string } }[];
}

/**
 * A producer's order counts against the consumers' store, read here: the processing log holds
 * each message's first processing, in the order it happened (the skipped duplicates are apart).
 * One consumer per queue, so that is its consumer's order. A duplicate never raises the highest
 * sequence read (its first copy came before), so the largest gap is the log's, exactly; and the
 * reads out of order are the log's, plus at most every duplicate delivery.
 */
function orderMatchesTheStore(p: ChaosJson['producers'][number], logged: readonly number[]): void {
  const o = p.reconciliation.order;
  let highest = -1;
  let late = 0;
  let largestGap = 0;
  for (const seq of logged) {
    if (seq < highest) late++;
    else {
      largestGap = Math.max(largestGap, seq - highest - 1);
      highest = seq;
    }
  }
  const what = `producer ${p.producer}: ${JSON.stringify(o)}; the log: ${late} late, largest gap ${largestGap}`;
  expect(o.reads, what).toBe(p.reconciliation.counts.readTotal);
  expect(
    o.streams.map((s) => [s.queue, s.reads]),
    what,
  ).toEqual([[p.queue, o.reads]]);
  expect(o.largestGap, what).toBe(largestGap);
  expect(o.outOfOrder, what).toBeGreaterThanOrEqual(late);
  expect(o.outOfOrder - late, what).toBeLessThanOrEqual(p.reconciliation.duplicateDeliveries);
  expect(o.expected + o.unexplained, what).toBe(o.outOfOrder);
  // Through the faults a quorum queue delivers one publisher's messages to its consumer in
  // publish order, but for what was redelivered or sent again.
  expect(o.unexplained, what).toBe(0);
}

/**
 * Every producer's reconciliation against the consumers' store (`store`, read with the test's own
 * SQL) and the ledgers file (`ledgerFile`): every confirmed id processed, nothing processed that
 * no producer of the run sent, each producer's order that of the store's log, nothing confirmed
 * lost, and the control producer's silent loss exactly what it wrote and the store never saw.
 */
export async function chaosAgreesWithTheStore(
  doc: ChaosJson,
  files: { store: string; ledgerFile: string },
  options: { confirming: number; controlQueue: string | null },
): Promise<void> {
  const { store, ledgerFile } = files;
  // The consumers' durable store (SQLite), read here with its own SQL: what was processed,
  // per producer, against each producer's reconciliation.
  const db = new Database(store, { readonly: true });
  let processedIds: string[];
  let loggedInOrder: string[];
  let skipped: number;
  let logged: number;
  try {
    processedIds = db.prepare('SELECT message_id FROM processed').pluck().all() as string[];
    loggedInOrder = db.prepare('SELECT message_id FROM processing_log ORDER BY id').pluck().all() as string[];
    skipped = db.prepare('SELECT count(*) FROM skipped').pluck().get() as number;
    logged = db.prepare('SELECT count(*) FROM processing_log').pluck().get() as number;
  } finally {
    db.close();
  }
  // The idempotent store processed every id once: the log has one row per processed id.
  expect(logged).toBe(processedIds.length);
  const stored = new Set(processedIds);
  const ledgers = JSON.parse(await readFile(ledgerFile, 'utf8')) as LedgersFile;
  expect(ledgers.kind).toBe('chaos-ledgers');
  expect(ledgers.producers.map((x) => [x.producer, x.queue, x.confirms])).toEqual(doc.producers.map((x) => [x.producer, x.queue, x.confirms]));
  const confirming = doc.producers.filter((p) => p.confirms);
  expect(confirming.length).toBe(options.confirming);
  let ours = 0;
  for (const p of doc.producers) {
    const c = p.reconciliation;
    const { seqs } = seqsOf(processedIds, p.runId);
    ours += seqs.length;
    expect(c.counts.attempted).toBeGreaterThan(1_000);
    expect(seqs.every((s) => s < c.counts.attempted)).toBe(true);
    expect(c.counts.readDistinct, `producer ${p.producer}`).toBe(seqs.length);
    if (p.confirms) {
      expect(c.lost).toBe(0);
      // Every message confirmed to the producer is among those the consumers processed: by id,
      // the ledger's confirmed ids against the store's.
      const entry = ledgers.producers.find((x) => x.producer === p.producer)!;
      expect(entry.ledger.runId).toBe(p.runId);
      const confirmedIds = confirmedIdsOf(entry.ledger);
      expect(confirmedIds.length, `producer ${p.producer}`).toBe(c.counts.confirmed);
      expect(confirmedIds.length).toBeGreaterThan(1_000);
      expect(
        confirmedIds.filter((id) => !stored.has(id)),
        `producer ${p.producer}: confirmed, not in the store`,
      ).toEqual([]);
    }
    orderMatchesTheStore(p, seqsOf(loggedInOrder, p.runId).seqs);
  }
  // Nothing in the store that no producer of this run sent.
  expect(ours).toBe(processedIds.length);
  expect(doc.unexpected).toBe(0);
  expect(doc.absorbed).toBe(skipped);
  expect(doc.totals.lost).toBe(0);
  // The producers' written counter reached the ledger's count (it read 0 once, with no hook listening).
  expect(doc.samples.at(-1)!.written).toBe(confirming.reduce((a, p) => a + p.reconciliation.counts.written, 0));
  // The control producer (no confirms) is reconciled on its own queue, and what it lost silently
  // is exactly what it handed to the socket and the store never saw.
  if (options.controlQueue === null) {
    expect(doc.control).toBeNull();
    return;
  }
  expect(doc.control).not.toBeNull();
  const controlProducer = doc.producers.find((p) => !p.confirms)!;
  expect(controlProducer.queue).toBe(options.controlQueue);
  const controlStored = distinct(seqsOf(processedIds, controlProducer.runId).seqs);
  expect(doc.control!.silentlyLost).toBe(controlProducer.reconciliation.counts.written - controlStored);
}
