import { writeFileSync } from 'node:fs';
import { EnvironmentError, errorMessage } from '../errors.js';
import { renderHtmlReport } from '../report/html.js';
import { toJsonDocument } from '../report/json.js';

/**
 * stdout is data (the --json document); stderr is for people (tables, verdicts). With --html,
 * the same document and the report also go to a self-contained HTML file.
 */
export function emit(options: { json: boolean; html?: string | undefined }, kind: string, data: object, text: string): void {
  process.stderr.write(`${text}\n`);
  if (options.json) process.stdout.write(`${toJsonDocument(kind, data)}\n`);
  if (options.html !== undefined) {
    try {
      writeFileSync(options.html, renderHtmlReport(kind, data, text));
    } catch (err) {
      throw new EnvironmentError(`could not write the HTML report ${options.html}: ${errorMessage(err)}`);
    }
    process.stderr.write(`HTML report: ${options.html}\n`);
  }
}
