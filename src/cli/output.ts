import { toJsonDocument } from '../report/json.js';

/** stdout is data (the --json document); stderr is for people (tables, verdicts). */
export function emit(options: { json: boolean }, kind: string, data: object, text: string): void {
  process.stderr.write(`${text}\n`);
  if (options.json) process.stdout.write(`${toJsonDocument(kind, data)}\n`);
}
