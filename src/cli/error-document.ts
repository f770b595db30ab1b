import { ExitCode } from '../errors.js';
import { ERROR_KIND, type ErrorDocument, toJsonDocument } from '../report/json.js';

/*
 * Under --json an error is a document too: when a command ends with a non-zero exit and has not
 * printed its own document, stdout gets this one, and stderr still gets the one line. Its kind is
 * 'error'; like every document it carries schemaVersion and broker (null: no result from one).
 * Pure. Its type is report/json.ts's ErrorDocument.
 */
export type { ErrorDocument } from '../report/json.js';

/**
 * Whether this run has put its --json document on stdout (emit sets it): main.ts then prints no
 * error document, since stdout holds one document, never two. main() clears it when it starts.
 */
export const stdoutDocument = { written: false };

/** Whether the command line asks for a JSON document: --json before any `--`. */
export function jsonRequested(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).includes('--json');
}

/** What the document says when no error was described (a signal, a failed verdict without its document). */
function fallbackMessage(exitCode: number): string {
  switch (exitCode) {
    case ExitCode.verdict:
      return 'the verdict failed';
    case ExitCode.interrupted:
      return 'interrupted';
    case ExitCode.terminated:
      return 'terminated';
    default:
      return `ended with exit code ${exitCode}`;
  }
}

/** The error document for an exit code and what was said of the error (if anything was), one JSON text. */
export function errorDocument(exitCode: number, said?: { message?: string | undefined; hint?: string | undefined }): string {
  const doc: ErrorDocument = { exitCode, message: said?.message ?? fallbackMessage(exitCode), hint: said?.hint ?? null };
  return toJsonDocument(ERROR_KIND, doc, null);
}
