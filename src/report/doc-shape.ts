import { KIND_VIEWS, type Kind, type ResultOf, isKind } from './kinds.js';
import { bool, type Mismatch, obj, opt } from './shape-check.js';
import { strings } from './kinds/shared.js';

/**
 * What `rmq-bench report` reads of a --json document, checked before anything is computed from
 * it: the verdict fields every document may carry, then its kind's own (its view's shape,
 * report/kinds/<kind>/view.ts), said in words where a document differs ("runs[0].reconciliation.lost
 * is missing, expected a number"). Pure.
 */

/** What every document of a known kind may carry: its verdict, and why it failed. */
const VERDICT = obj({ ok: opt(bool), problems: opt(strings), reasons: opt(strings) });

/** A document of any kind, known or not: its `ok` is its verdict (a boolean, or none). */
const ANY_DOCUMENT = obj({ ok: opt(bool) });

/**
 * Where a document of this kind differs from what the report reads, in document order: every
 * document's `ok`; a known kind's verdict fields and its own. Empty: it matches. Pure.
 */
export function shapeMismatches(kind: string, doc: Readonly<Record<string, unknown>>): Mismatch[] {
  const out: Mismatch[] = [];
  if (!isKind(kind)) {
    ANY_DOCUMENT.check(doc, '', out);
    return out;
  }
  VERDICT.check(doc, '', out);
  KIND_VIEWS[kind].shape?.check(doc, '', out);
  return out;
}

/**
 * A document of this kind, read as the result it was printed from. Only for a document without
 * shape mismatches: its kind's shape lists every field the views read without a guard, which is
 * what makes this hold.
 */
export function asResult<K extends Kind>(_kind: K, doc: Readonly<Record<string, unknown>>): ResultOf<K> {
  return doc as unknown as ResultOf<K>;
}

/** One mismatch in words: "runs is a string, expected an array of runs". */
export const mismatchText = (m: Mismatch): string => `${m.path} is ${m.found}, expected ${m.expected}`;

const MAX_PROBLEM_CHARS = 150;

/**
 * The first mismatches in words, as many as fit in one line of about 150 characters (at least
 * one), then how many more: "runs[0].run is missing, expected a number; and 3 more". Pure.
 */
export function mismatchesText(mismatches: readonly Mismatch[]): string {
  const shown: string[] = [];
  for (const m of mismatches) {
    const text = mismatchText(m);
    const more = mismatches.length - shown.length - 1;
    const tail = more > 0 ? `; and ${more} more` : '';
    if (shown.length > 0 && [...shown, text].join('; ').length + tail.length > MAX_PROBLEM_CHARS) break;
    shown.push(text);
  }
  const rest = mismatches.length - shown.length;
  return `${shown.join('; ')}${rest > 0 ? `; and ${rest} more` : ''}`;
}
