import path from 'node:path';
import { ERROR_KIND } from './json.js';
import { failureReasons, keyFiguresOrThrow, verdictOf } from './doc-figures.js';
import { asResult, mismatchesText, shapeMismatches } from './doc-shape.js';
import { isNum, isObj } from './figure-text.js';
import { chartsFor, embedJson, pageHead } from './html.js';
import { type Kind, isKind } from './kinds.js';
import { countsLine, type ReportSummary, type SummaryDocument, statusText } from './kinds/report/view.js';
import { SCHEMA_VERSION } from '../schema-version.js';
import type { ReportInput } from '../scenarios/broker-tools/report.js';
import { typeName } from './shape-check.js';
import { escapeHtml } from './svg.js';

/**
 * `rmq-bench report`: one self-contained page for a set of --json documents (a summary table,
 * then a section per input with its charts and its JSON). Pure: the files' texts in, entries and
 * markup out; src/scenarios/broker-tools/report.ts reads the files.
 */

/** One input as the page shows it: its summary, its document and what was drawn from it. */
export interface ReportEntry extends SummaryDocument {
  readonly doc: Readonly<Record<string, unknown>> | null;
  /** malformed, and not even a document: the start of the file, shown in its section. */
  readonly excerpt: string | null;
  /** Its charts' markup, drawn once read (none for a kind without charts, or a document not read). */
  readonly charts: readonly string[];
}

const MAX_REASON = 160;
const EXCERPT_CHARS = 2_000;

/** A message on one line, at most 160 characters. */
function oneLine(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > MAX_REASON ? `${t.slice(0, MAX_REASON - 1)}…` : t;
}

type Unanchored = Omit<ReportEntry, 'anchor'>;

function bad(file: string, status: 'malformed' | 'unreadable', problem: string, text = ''): Unanchored {
  return {
    file,
    status,
    kind: null,
    schemaVersion: null,
    knownKind: false,
    problem: oneLine(problem),
    keyFigures: '-',
    reasons: [],
    doc: null,
    excerpt: text === '' ? null : text.slice(0, EXCERPT_CHARS),
    charts: [],
  };
}

/** A document of a kind whose fields are not what the report reads: listed malformed, its JSON kept, nothing computed from it. */
function unread(file: string, kind: string, schemaVersion: number, knownKind: boolean, doc: Readonly<Record<string, unknown>>, problem: string): Unanchored {
  return { file, status: 'malformed', kind, schemaVersion, knownKind, problem: oneLine(problem), keyFigures: '-', reasons: [], doc, excerpt: null, charts: [] };
}

const errorText = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

/**
 * What the report computes from a document whose fields match its kind's (doc-shape.ts). None
 * should throw then; if one does, the document is listed malformed, with the step that failed.
 */
export interface DocumentReaders {
  readonly verdict: (kind: string, doc: Record<string, unknown>) => boolean | null;
  readonly figures: (kind: string, doc: Record<string, unknown>) => string;
  readonly reasons: (kind: string, doc: Record<string, unknown>) => string[];
  readonly charts: (kind: string, doc: Record<string, unknown>) => string[];
}

const chartsOfDocument = <K extends Kind>(kind: K, doc: Record<string, unknown>): string[] => chartsFor(kind, asResult(kind, doc));

export const DOCUMENT_READERS: DocumentReaders = {
  verdict: verdictOf,
  figures: keyFiguresOrThrow,
  reasons: failureReasons,
  charts: (kind, doc) => (isKind(kind) ? chartsOfDocument(kind, doc) : []),
};

/** One input → its entry: read or not, malformed or not, newer or not, its verdict, figures and charts. Pure. */
export function classifyInput(input: ReportInput, readers: DocumentReaders = DOCUMENT_READERS): Unanchored {
  const { file } = input;
  if ('readError' in input) return bad(file, 'unreadable', input.readError);
  const { text } = input;
  if (text.trim() === '') return bad(file, 'malformed', 'empty file: no JSON document (did the command fail before printing one?)');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return bad(file, 'malformed', `not JSON (${err instanceof Error ? err.message : String(err)})`, text);
  }
  if (!isObj(parsed)) return bad(file, 'malformed', `not a JSON object (${typeName(parsed)})`, text);
  const missing = [...(parsed.schemaVersion === undefined ? ['schemaVersion'] : []), ...(parsed.kind === undefined ? ['kind'] : [])];
  if (missing.length > 0) return bad(file, 'malformed', `no ${missing.join(' and no ')}: not a document rmq-bench --json prints`, text);
  const v = parsed.schemaVersion;
  if (!isNum(v) || !Number.isInteger(v) || v < 1)
    return bad(file, 'malformed', `schemaVersion is not a whole number above 0 (${oneLine(JSON.stringify(v))})`, text);
  if (typeof parsed.kind !== 'string' || parsed.kind.trim() === '')
    return bad(file, 'malformed', `kind is not a name (${oneLine(JSON.stringify(parsed.kind))})`, text);
  const kind = parsed.kind;
  // An error document (a run that failed before its result) is one rmq-bench prints, with no charts.
  const knownKind = isKind(kind) || kind === ERROR_KIND;
  if (v > SCHEMA_VERSION)
    return {
      file,
      status: 'newer',
      kind,
      schemaVersion: v,
      knownKind,
      problem: `written by a newer rmq-bench (schemaVersion ${v}; this one reads ${SCHEMA_VERSION})`,
      keyFigures: '-',
      reasons: [],
      doc: parsed,
      excerpt: null,
      charts: [],
    };
  const mismatches = shapeMismatches(kind, parsed);
  if (mismatches.length > 0) return unread(file, kind, v, knownKind, parsed, mismatchesText(mismatches));
  // The fields match, so nothing below should throw; if something does, the document is not counted as read.
  let step = 'its verdict could not be read from it';
  try {
    const ok = readers.verdict(kind, parsed);
    step = 'its key figures could not be computed from it';
    const figures = readers.figures(kind, parsed);
    step = 'why it failed could not be read from it';
    const reasons = ok === false ? readers.reasons(kind, parsed) : [];
    step = 'its charts could not be drawn from it';
    const charts = isKind(kind) ? readers.charts(kind, parsed) : [];
    return {
      file,
      status: ok === null ? 'no-verdict' : ok ? 'ok' : 'failed',
      kind,
      schemaVersion: v,
      knownKind,
      problem: null,
      keyFigures: figures,
      reasons,
      doc: parsed,
      excerpt: null,
      charts,
    };
  } catch (err) {
    return unread(file, kind, v, knownKind, parsed, `${step} (${errorText(err)})`);
  }
}

/** A section id from a file name: doc-<name without .json>, made unique with -2, -3... Pure. */
export function anchorsFor(files: readonly string[]): string[] {
  const used = new Set<string>();
  return files.map((f) => {
    const slug =
      path
        .basename(f)
        .replace(/\.json$/i, '')
        .toLowerCase()
        .replace(/[^a-z0-9_-]+/g, '-')
        .replace(/^-+|-+$/g, '') || 'file';
    let id = `doc-${slug}`;
    for (let k = 2; used.has(id); k++) id = `doc-${slug}-${k}`;
    used.add(id);
    return id;
  });
}

/** The inputs, in order, each classified and given its section's anchor. Pure. */
export function reportEntries(inputs: readonly ReportInput[]): ReportEntry[] {
  const anchors = anchorsFor(inputs.map((i) => i.file));
  return inputs.map((input, i) => ({ ...classifyInput(input), anchor: anchors[i]! }));
}

/** Every document read and none failed (no verdict is not a failure; malformed, unreadable and newer are). */
export function reportOk(entries: readonly ReportEntry[]): boolean {
  return entries.every((e) => e.status === 'ok' || e.status === 'no-verdict');
}

/** The --json document's data (and the page's embedded summary): no input's own document in it. Pure. */
export function reportSummary(entries: readonly ReportEntry[], output: string): ReportSummary {
  return {
    output,
    ok: reportOk(entries),
    documents: entries.map((e) => ({
      file: e.file,
      anchor: e.anchor,
      kind: e.kind,
      schemaVersion: e.schemaVersion,
      knownKind: e.knownKind,
      status: e.status,
      problem: e.problem,
      keyFigures: e.keyFigures,
      reasons: e.reasons,
    })),
  };
}

const COMBINED_STYLE = `
h3{font-size:15px;margin:20px 0 6px}
table.summary{border-collapse:collapse;width:100%;margin:8px 0 16px;table-layout:fixed}
table.summary th,table.summary td{border:1px solid #d1d5db;padding:4px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
table.summary th{background:#f9fafb}
.verdict.none{background:#6b7280}.bad-input{color:#9a3412;font-weight:600}
section.doc{border-top:2px solid #e5e7eb;margin-top:32px}
section.doc>h2{overflow-wrap:anywhere}
.charts{overflow-x:auto}
.note{background:#fef3c7;padding:6px 10px;border-radius:4px}
ul.reasons{color:#991b1b;margin:6px 0}
ul.reasons.short{margin:0;padding-left:18px}
`;

const MAX_ROW_REASONS = 3;

function badge(e: ReportEntry): string {
  switch (e.status) {
    case 'ok':
      return '<span class="verdict ok">OK</span>';
    case 'failed':
      return '<span class="verdict failed">FAILED</span>';
    case 'no-verdict':
      return '<span class="verdict none">no verdict</span>';
    default:
      return `<span class="bad-input">${escapeHtml(statusText(e))}</span>`;
  }
}

function kindCell(e: ReportEntry): string {
  if (e.kind === null) return '-';
  return `${escapeHtml(e.kind)}${e.knownKind ? '' : ' <em>(unknown kind)</em>'}`;
}

function summaryRow(e: ReportEntry, withWhy: boolean): string {
  const link = `<a href="#${e.anchor}">${escapeHtml(e.file)}</a>`;
  let why = '';
  if (e.status === 'failed') {
    const shown = e.reasons.slice(0, MAX_ROW_REASONS).map((r) => `<li>${escapeHtml(r)}</li>`);
    if (e.reasons.length > MAX_ROW_REASONS) shown.push(`<li>and ${e.reasons.length - MAX_ROW_REASONS} more</li>`);
    why = `${shown.length > 0 ? `<ul class="reasons short">${shown.join('')}</ul>` : 'the document gives no reason'} <a href="#${e.anchor}">see its section</a>`;
  }
  return `<tr data-status="${e.status}"><td>${link}</td><td>${kindCell(e)}</td><td>${badge(e)}</td><td>${escapeHtml(e.keyFigures)}</td>${withWhy ? `<td>${why}</td>` : ''}</tr>`;
}

/** The summary's columns: "why it failed" only when one did. */
function summaryHead(withWhy: boolean): string {
  const cols: [string, number][] = withWhy
    ? [
        ['file', 18],
        ['kind', 11],
        ['verdict', 15],
        ['key figures', 27],
        ['why it failed', 29],
      ]
    : [
        ['file', 24],
        ['kind', 14],
        ['verdict', 24],
        ['key figures', 38],
      ];
  return `<colgroup>${cols.map(([, w]) => `<col style="width:${w}%">`).join('')}</colgroup><thead><tr>${cols.map(([h]) => `<th>${h}</th>`).join('')}</tr></thead>`;
}

/** A chart section's headings one level down (each input's own heading is the h2). */
const demote = (markup: string): string => markup.replace(/<(\/?)h2>/g, '<$1h3>');

const chartsOf = (e: ReportEntry): string => (e.charts.length === 0 ? '' : `<div class="charts">${demote(e.charts.join('\n'))}</div>`);

function section(e: ReportEntry): string {
  const out: string[] = [`<section class="doc" id="${e.anchor}" data-status="${e.status}"${e.kind === null ? '' : ` data-kind="${escapeHtml(e.kind)}"`}>`];
  // The reason a file was not read is in the note below; the heading says only which case it is.
  const short = e.status === 'newer' ? 'newer schema' : e.status;
  out.push(`<h2>${escapeHtml(e.file)} ${e.problem === null ? badge(e) : `<span class="bad-input">${short}</span>`}</h2>`);
  if (e.kind !== null) {
    const figures = e.keyFigures === '-' ? '' : ` · ${escapeHtml(e.keyFigures)}`;
    out.push(`<div class="meta">kind ${kindCell(e)} · schemaVersion ${e.schemaVersion ?? '?'}${figures}</div>`);
  }
  if (e.status === 'failed')
    out.push(
      e.reasons.length > 0
        ? `<ul class="reasons">${e.reasons.map((r) => `<li>${escapeHtml(r)}</li>`).join('')}</ul>`
        : '<p class="note">The document gives no reason for its failed verdict: see its JSON.</p>',
    );
  if (e.status === 'newer') out.push(`<p class="note">${escapeHtml(statusText(e))}: its fields are not interpreted; the JSON only.</p>`);
  else if (e.kind !== null && !e.knownKind) out.push(`<p class="note">rmq-bench does not know the kind '${escapeHtml(e.kind)}': the JSON only.</p>`);
  if (e.status === 'malformed' || e.status === 'unreadable') {
    const kindNote = e.kind === null || e.doc === null ? '' : ` — not read as a ${e.kind} document: no figures, charts or verdict from it; the JSON only.`;
    out.push(`<p class="note">${escapeHtml(statusText(e) + kindNote)}</p>`);
    if (e.excerpt !== null) {
      const more = e.excerpt.length >= EXCERPT_CHARS ? ` (its first ${EXCERPT_CHARS.toLocaleString('en-US')} characters)` : '';
      out.push(`<details><summary>The file${more}</summary><pre>${escapeHtml(e.excerpt)}</pre></details>`);
    }
  }
  out.push(chartsOf(e));
  if (e.doc !== null) {
    out.push(`<details><summary>The JSON document</summary><pre class="json-view" data-src="json-${e.anchor}"></pre></details>`);
    out.push(`<script type="application/json" id="json-${e.anchor}">${embedJson(JSON.stringify(e.doc))}</script>`);
  }
  out.push('<p><a href="#summary">back to the summary</a></p>', '</section>');
  return out.filter((x) => x !== '').join('\n');
}

/**
 * The page: a summary table (one row per input: file, kind, verdict, key figures, why it failed,
 * linking to its section), then one section per input with its charts and its JSON document.
 * Self-contained like renderHtmlReport's pages (same CSP, inline styles and SVG); the summary is
 * embedded in <script type="application/json" id="rmq-bench-data">. Pure: data in, markup out.
 */
export function renderCombinedReport(entries: readonly ReportEntry[], output: string, generatedAtIso = new Date().toISOString()): string {
  const ok = reportOk(entries);
  const withWhy = entries.some((e) => e.status === 'failed');
  const overall = `<span class="verdict ${ok ? 'ok' : 'failed'}">${ok ? 'all OK' : 'not all OK'}</span>`;
  const summary = { schemaVersion: SCHEMA_VERSION, kind: 'report', ...reportSummary(entries, output) };
  return `${pageHead(`rmq-bench report (${countsLine(entries)})`, COMBINED_STYLE)}
<body data-kind="report">
<h1>rmq-bench report</h1>
<div class="meta">generated ${escapeHtml(generatedAtIso)} · ${escapeHtml(countsLine(entries))} ${overall}</div>
<h2 id="summary">Summary</h2>
<table class="summary">${summaryHead(withWhy)}
<tbody>
${entries.map((e) => summaryRow(e, withWhy)).join('\n')}
</tbody></table>
${entries.map(section).join('\n')}
<script type="application/json" id="rmq-bench-data">${embedJson(JSON.stringify(summary))}</script>
<script>
(function () {
  var views = document.querySelectorAll('pre.json-view');
  for (var i = 0; i < views.length; i++) {
    var src = document.getElementById(views[i].getAttribute('data-src'));
    views[i].textContent = JSON.stringify(JSON.parse(src.textContent), null, 2);
  }
  document.body.setAttribute('data-ready', String(document.querySelectorAll('svg.chart').length));
})();
</script>
</body>
</html>
`;
}
