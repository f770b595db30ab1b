import { writeFileSync } from 'node:fs';
import { OutputError } from '../errors.js';
import { renderHtmlReport } from '../report/html.js';
import type { BrokerInfo } from '../cluster/broker/broker-info.js';
import { toJsonDocument } from '../report/json.js';
import { KIND_VIEWS, type Kind, type ResultOf } from '../report/kinds.js';
import { paintReport } from '../report/palette.js';
import { paletteFor } from './colour.js';
import { stdoutDocument } from './error-document.js';

/**
 * stdout holds the result: the report (tables, verdict), or with --json the document alone (the
 * report then goes to stderr); progress, notes and hints go to stderr. With --html, the same
 * document and the report also go to a self-contained HTML file.
 *
 * Output files follow one rule: their path is checked when the command line is parsed
 * (writableFile: the folder exists and is writable, the path is not a folder; no folder is
 * created), and they are written after the result is printed, so a write that still fails (a
 * full disk) costs the file, never the result: OutputError, exit 74.
 */

/** A file an option asked for: written by writeOutputs once the result is out. */
export interface OutputFile {
  /** The option that named it (--html, --ledger, --csv, -o), for the message. */
  readonly flag: string;
  readonly path: string;
  /** What to write; called once, at write time. */
  content(): string;
  /** A line for stderr once it is written (e.g. `HTML report: r.html`). */
  readonly announce?: string;
}

/** Write every file, each attempted even when one fails; then one OutputError naming the failures. */
export function writeOutputs(files: readonly OutputFile[], write: (path: string, text: string) => void = writeFileSync): void {
  const failed: string[] = [];
  for (const f of files) {
    try {
      write(f.path, f.content());
      if (f.announce !== undefined) process.stderr.write(`${f.announce}\n`);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message.split('\n')[0] : String(err));
      failed.push(`${f.flag} ${f.path} (${code})`);
    }
  }
  if (failed.length > 0) throw new OutputError(`could not write ${failed.join(', ')}`, { hint: 'the result above is complete; only the file is missing' });
}

/**
 * The result: its terminal report (its kind's printer, or `text`) on stdout, so that `| grep` and
 * `> file` take it; with --json, stdout holds the document alone and the report goes to stderr.
 * Then the files (--html, and `files`). The kind decides the result's type. `broker`: the
 * version the command ran against (ctx.broker()), named in the document and the page.
 */
export function emit<K extends Kind>(
  options: { json: boolean; html?: string | undefined; broker: BrokerInfo | null },
  kind: K,
  data: ResultOf<K>,
  { text = KIND_VIEWS[kind].text(data), files = [] }: { text?: string; files?: readonly OutputFile[] } = {},
): void {
  // Painted for the terminal it goes to (verdicts green or red); the HTML page gets it plain.
  if (options.json) {
    process.stderr.write(`${paintReport(text, paletteFor(process.stderr))}\n`);
    process.stdout.write(`${toJsonDocument(kind, data, options.broker)}\n`);
    stdoutDocument.written = true;
  } else process.stdout.write(`${paintReport(text, paletteFor(process.stdout))}\n`);
  const html = options.html;
  writeOutputs([
    ...(html === undefined
      ? []
      : [{ flag: '--html', path: html, content: () => renderHtmlReport(kind, data, text, { broker: options.broker }), announce: `HTML report: ${html}` }]),
    ...files,
  ]);
}
