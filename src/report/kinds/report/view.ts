import { n, objs } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { list, obj, opt, str } from '../../shape-check.js';

/**
 * `rmq-bench report`: one page for a set of --json documents; its own document lists each input
 * with its verdict (report/combined.ts reads them).
 *
 * ok, failed, no-verdict: a document this rmq-bench reads (its `ok`, or none). malformed: not JSON,
 * not an object, no kind or schemaVersion; or a field the report reads of its kind (its view's
 * shape) missing or of another type, or its figures or charts could not be computed (kind and
 * document kept). unreadable: the file could not be read. newer: a schemaVersion above the one
 * this rmq-bench writes (its fields are not interpreted).
 */
const ENTRY_STATUSES = ['ok', 'failed', 'no-verdict', 'malformed', 'unreadable', 'newer'] as const;
export type EntryStatus = (typeof ENTRY_STATUSES)[number];

/** One input in the --json document (and the page's embedded summary). */
export interface SummaryDocument {
  readonly file: string;
  /** The id of its section in the page (unique within the page). */
  readonly anchor: string;
  readonly kind: string | null;
  readonly schemaVersion: number | null;
  /** A kind some rmq-bench command prints (false without a kind). */
  readonly knownKind: boolean;
  readonly status: EntryStatus;
  /** malformed, unreadable, newer: one line saying why it was not read ("runs is a string, expected an array of runs"). */
  readonly problem: string | null;
  readonly keyFigures: string;
  /** failed: why, from the document (problems, reasons, claims not held); may be empty. */
  readonly reasons: readonly string[];
}

export interface ReportSummary {
  readonly output: string;
  readonly ok: boolean;
  readonly documents: SummaryDocument[];
}

/** The verdict in words: OK, FAILED, no verdict, or why the file was not read. */
export function statusText(e: Pick<SummaryDocument, 'status' | 'problem'>): string {
  switch (e.status) {
    case 'ok':
      return 'OK';
    case 'failed':
      return 'FAILED';
    case 'no-verdict':
      return 'no verdict';
    case 'newer':
      return e.problem ?? 'written by a newer rmq-bench';
    default:
      return `${e.status}: ${e.problem ?? '?'}`;
  }
}

/** How many of each status, in the page's and stderr's words: "3 OK, 1 FAILED, 1 malformed". */
export function countsLine(entries: readonly Pick<SummaryDocument, 'status'>[]): string {
  const label: Record<EntryStatus, string> = {
    ok: 'OK',
    failed: 'FAILED',
    'no-verdict': 'no verdict',
    malformed: 'malformed',
    unreadable: 'unreadable',
    newer: 'newer schema',
  };
  const counts = new Map<EntryStatus, number>();
  for (const e of entries) counts.set(e.status, (counts.get(e.status) ?? 0) + 1);
  const parts = ENTRY_STATUSES.filter((k) => counts.has(k)).map((k) => `${counts.get(k)} ${label[k]}`);
  return `${entries.length} document${entries.length === 1 ? '' : 's'}: ${parts.join(', ')}`;
}

/** stderr: one line per document, then the page written. Pure. */
export function renderReportLines(entries: readonly SummaryDocument[], output: string): string {
  const lines = entries.map((e) => {
    const kind = e.kind === null ? '' : ` (${e.kind}${e.knownKind ? '' : ', unknown kind'})`;
    const figures = e.keyFigures === '-' ? '' : ` — ${e.keyFigures}`;
    const why = e.reasons.length > 0 ? ` — why: ${e.reasons.join('; ')}` : '';
    return `${e.file}${kind}: ${statusText(e)}${figures}${why}`;
  });
  return [...lines, `report: ${output} (${countsLine(entries)})`].join('\n');
}

export const report: KindView<ReportSummary> = {
  shape: obj<ReportSummary>({ documents: opt(list('documents', obj<SummaryDocument>({ status: opt(str) }))) }),
  text: (r) => renderReportLines(r.documents, r.output),
  charts: none,
  figures: (d) => {
    const docs = objs(d.documents);
    const failed = docs.filter((x) => x.status !== 'ok' && x.status !== 'no-verdict').length;
    return `${n(docs.length)} documents, ${n(failed)} failed or not read`;
  },
  reasons: none,
};
