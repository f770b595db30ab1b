import Database from 'better-sqlite3';
import { DataError } from '../errors.js';

/**
 * The consumer's durable record of what it processed (SQLite, WAL). Every completed
 * processing is appended to processing_log; with `idempotent`, a message id already in
 * `processed` is detected in the same transaction as the work and skipped.
 */
export interface ProcessedStore {
  /** Run the work and record it in one transaction. 'duplicate' when idempotent and already processed. */
  process(messageId: string, deliveryCount: number, work: () => void): 'processed' | 'duplicate';
  /** message id → how many times it was processed (the log), for reconciliation. */
  processedCounts(): Map<string, number>;
  /** Idempotent and already processed: the consumer skips the work itself, not only its record. Always false otherwise. */
  alreadyProcessed(messageId: string): boolean;
  skippedDuplicates(): number;
  close(): void;
}

export function openProcessedStore(file: string, options: { idempotent: boolean; readonly?: boolean }): ProcessedStore {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
  } catch (err) {
    throw new DataError(`cannot open the store ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!options.readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(`
      CREATE TABLE IF NOT EXISTS processed (message_id TEXT PRIMARY KEY, first_at INTEGER NOT NULL, delivery_count INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS processing_log (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT NOT NULL, at INTEGER NOT NULL, delivery_count INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS skipped (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT NOT NULL, at INTEGER NOT NULL);
    `);
  }
  const insertProcessed = options.readonly
    ? undefined
    : db.prepare('INSERT INTO processed (message_id, first_at, delivery_count) VALUES (?, ?, ?) ON CONFLICT (message_id) DO NOTHING');
  const insertLog = options.readonly ? undefined : db.prepare('INSERT INTO processing_log (message_id, at, delivery_count) VALUES (?, ?, ?)');
  const insertSkipped = options.readonly ? undefined : db.prepare('INSERT INTO skipped (message_id, at) VALUES (?, ?)');
  const processTx = options.readonly
    ? undefined
    : db.transaction((messageId: string, deliveryCount: number, work: () => void): 'processed' | 'duplicate' => {
        const now = Date.now();
        const fresh = insertProcessed!.run(messageId, now, deliveryCount).changes === 1;
        if (!fresh && options.idempotent) {
          insertSkipped!.run(messageId, now);
          return 'duplicate';
        }
        work();
        insertLog!.run(messageId, now, deliveryCount);
        return 'processed';
      });
  return {
    process(messageId, deliveryCount, work) {
      if (!processTx) throw new DataError(`the store ${file} is open read-only`);
      return processTx(messageId, deliveryCount, work);
    },
    alreadyProcessed(messageId) {
      if (!options.idempotent) return false;
      return db.prepare('SELECT 1 FROM processed WHERE message_id = ?').get(messageId) !== undefined;
    },
    processedCounts() {
      const rows = db.prepare('SELECT message_id AS id, COUNT(*) AS n FROM processing_log GROUP BY message_id').all() as { id: string; n: number }[];
      return new Map(rows.map((r) => [r.id, r.n]));
    },
    skippedDuplicates() {
      return (db.prepare('SELECT COUNT(*) AS n FROM skipped').get() as { n: number }).n;
    },
    close() {
      db.close();
    },
  };
}

/** How many processings the store has logged so far (read by another process while the consumer runs). */
export function countProcessed(file: string): number {
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      return (db.prepare('SELECT COUNT(*) AS n FROM processing_log').get() as { n: number }).n;
    } finally {
      db.close();
    }
  } catch {
    return 0;
  }
}
