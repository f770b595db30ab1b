import type { BrokerInfo } from '../cluster/broker/broker-info.js';
import { SCHEMA_VERSION } from '../schema-version.js';

/**
 * The one JSON document a --json command prints. Every document carries schemaVersion, kind and
 * broker: the RabbitMQ (and Erlang) version it ran against, or null when it ran against none (a
 * report of documents) or none answered (`cluster down`).
 */
export function toJsonDocument(kind: string, data: object, broker: BrokerInfo | null): string {
  // schemaVersion, kind and broker come first and cannot be overridden by a field of the data.
  const head = { schemaVersion: SCHEMA_VERSION, kind, broker };
  const doc = Object.assign({ ...head }, data, head);
  return JSON.stringify(doc, (_k, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1000) / 1000 : v), 2);
}

/** The kind of the document a command prints under --json when it fails before its own (src/cli/error-document.ts). */
export const ERROR_KIND = 'error';

/** What the error document says besides its head (src/cli/error-document.ts builds it). */
export interface ErrorDocument {
  readonly exitCode: number;
  /** The stderr line's what, without `rmq-bench: ` and the hint. */
  readonly message: string;
  /** The line's hint (what to do about it), or null. */
  readonly hint: string | null;
}
