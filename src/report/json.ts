import { SCHEMA_VERSION } from '../schema-version.js';

/** The one JSON document a --json command prints. Every document carries schemaVersion and kind. */
export function toJsonDocument(kind: string, data: object): string {
  // schemaVersion and kind come first and cannot be overridden by a field of the data.
  const doc = Object.assign({ schemaVersion: SCHEMA_VERSION, kind }, data, { schemaVersion: SCHEMA_VERSION, kind });
  return JSON.stringify(doc, (_k, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1000) / 1000 : v), 2);
}
