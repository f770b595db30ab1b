import { asResult } from './doc-shape.js';
import { ERROR_KIND } from './json.js';
import { type J, isNum, isObj, n, objs, s, strings } from './figure-text.js';
import { KIND_VIEWS, type Kind, isKind } from './kinds.js';

/**
 * What `rmq-bench report` says of one --json document: its key figures, why it failed, its
 * verdict. What every document carries (ok, problems, reasons, claims, runs' problems) is read
 * here; what one kind adds comes from its view (report/kinds/<kind>/view.ts). Asked only of a document
 * whose fields match its kind's shape (doc-shape.ts). Pure.
 */

const GENERIC_FIELDS = 8;

/** The fallback: the document's top-level numeric fields (schemaVersion aside), at most 8. Pure. */
function genericFigures(doc: Readonly<J>): string {
  const figures = Object.entries(doc)
    .filter(([k, v]) => k !== 'schemaVersion' && isNum(v))
    .map(([k, v]) => `${k} ${n(v)}`);
  if (figures.length === 0) return '-';
  return figures.length > GENERIC_FIELDS ? `${figures.slice(0, GENERIC_FIELDS).join(', ')}, …` : figures.join(', ');
}

const figuresOf = <K extends Kind>(kind: K, doc: Readonly<J>): string => KIND_VIEWS[kind].figures(asResult(kind, doc));
const reasonsOf = <K extends Kind>(kind: K, doc: Readonly<J>): string[] => KIND_VIEWS[kind].reasons(asResult(kind, doc));
const verdictOfKind = <K extends Kind>(kind: K, doc: Readonly<J>): boolean | null => KIND_VIEWS[kind].verdict?.(asResult(kind, doc)) ?? null;

/**
 * keyFigures, except that what a kind's figures throw is thrown: `rmq-bench report` lists such a
 * document as malformed rather than show the fallback as if nothing were wrong. Pure.
 */
export function keyFiguresOrThrow(kind: string, doc: Readonly<Record<string, unknown>>): string {
  const f = isKind(kind) ? figuresOf(kind, doc) : '';
  // No figure at all (its kind's fields missing, or a kind without figures of its own): the fallback.
  return /\d/.test(f) ? f : genericFigures(doc);
}

/**
 * The figures a document of this kind is about, in one line (compare: lost, silently lost and
 * duplicated per mode; alarm-demo: claims held and what never arrived...); any other kind, or a
 * document without the fields its kind has: its top-level numeric fields. Pure; never throws.
 */
export function keyFigures(kind: string, doc: Readonly<Record<string, unknown>>): string {
  try {
    return keyFiguresOrThrow(kind, doc);
  } catch {
    return genericFigures(doc);
  }
}

/**
 * Why a document failed, in its own words: `problems` and `reasons` (top level, and each run's or
 * result's, labelled), the claims not held, the thresholds passed, then what its kind adds (a failed audit's items,
 * compare's and verify's reconciliation verdicts). Empty when the document says nothing. Pure.
 */
export function failureReasons(kind: string, doc: Readonly<Record<string, unknown>>): string[] {
  const d: J = doc;
  const out: string[] = [...strings(d.problems), ...strings(d.reasons)];
  if (kind === ERROR_KIND && typeof d.message === 'string') out.push(`exit ${s(d.exitCode)}: ${d.message}`);
  const notHeld = (checks: unknown, label = ''): string[] =>
    objs(checks)
      .filter((c) => c.held === false)
      .map((c) => `${label}claim not held: ${s(c.claim)}${typeof c.measured === 'string' ? ` (measured: ${c.measured})` : ''}`);
  out.push(...notHeld(d.checks));
  // A threshold the run went past (--max-lost...): its message names it and the value.
  if (isObj(d.thresholds))
    out.push(
      ...objs(d.thresholds.checks)
        .filter((c) => c.ok === false)
        .map((c) => s(c.message)),
    );
  for (const x of [...objs(d.runs), ...objs(d.results)]) {
    const label =
      typeof x.via === 'string' ? x.via : typeof x.reason === 'string' ? x.reason : typeof x.mode === 'string' ? `${x.mode} run ${s(x.run)}` : 'run';
    out.push(...strings(x.problems).map((p) => `${label}: ${p}`));
    out.push(...notHeld(x.checks, `${label}: `));
  }
  if (isKind(kind)) out.push(...reasonsOf(kind, doc));
  return [...new Set(out)];
}

/** The verdict a document carries: its `ok`, or its kind's (verify: its reconciliation's; an error document's: failed); null when it has none. */
export function verdictOf(kind: string, d: Readonly<J>): boolean | null {
  if (typeof d.ok === 'boolean') return d.ok;
  // A command that failed before its result (--json's error document): failed.
  if (kind === ERROR_KIND) return false;
  return isKind(kind) ? verdictOfKind(kind, d) : null;
}
