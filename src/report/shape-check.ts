/**
 * A small checker of JSON values against declared shapes, that says in words where a value
 * differs ("runs[0].reconciliation.lost is missing, expected a number"): leaves (num, str,
 * bool), optional fields, lists, objects, records and a choice by one field's value. Pure.
 * report/doc-shape.ts declares with it what the report reads of each kind of document.
 */

/** One place where a document differs from what the report reads. */
export interface Mismatch {
  /** Where: `runs[0].reconciliation.lost`. */
  readonly path: string;
  /** What the report reads there: `a number`, `an array of runs`. */
  readonly expected: string;
  /** What is there: `missing`, `a string`, `null`. */
  readonly found: string;
}

export interface Shape {
  /** What it is, in words: `a number`, `an array of runs`. */
  readonly expected: string;
  /** Appends to `out` where `v`, found at `path`, differs from this shape. */
  readonly check: (v: unknown, path: string, out: Mismatch[]) => void;
}

/** A field an object may lack: checked only when present. */
interface Optional {
  readonly optional: Shape;
}

export type Field = Shape | Optional;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What a JSON value is, in words: `a string`, `an array`, `null`. */
export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number' && !Number.isFinite(v)) return 'a number out of range';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

export function leaf(expected: string, test: (v: unknown) => boolean): Shape {
  return {
    expected,
    check: (v, path, out) => {
      if (!test(v)) out.push({ path, expected, found: typeName(v) });
    },
  };
}

export const num = leaf('a number', (v) => typeof v === 'number' && Number.isFinite(v));
export const str = leaf('a string', (v) => typeof v === 'string');
export const bool = leaf('a boolean', (v) => typeof v === 'boolean');
/** Anything at all (a list the report only counts). */
export const anything: Shape = { expected: 'anything', check: () => {} };

export const opt = (shape: Shape): Optional => ({ optional: shape });

export function nullOr(shape: Shape): Shape {
  return {
    expected: `${shape.expected} or null`,
    check: (v, path, out) => {
      if (v === null) return;
      const mine: Mismatch[] = [];
      shape.check(v, path, mine);
      // A wrong type at this very place: say "a number or null", not "a number".
      out.push(...mine.map((m) => (m.path === path ? { ...m, expected: `${shape.expected} or null` } : m)));
    },
  };
}

/** An array of `items` (`noun`: what they are, in the plural: "runs", "numbers"). */
export function list(noun: string, items: Shape): Shape {
  const expected = `an array of ${noun}`;
  return {
    expected,
    check: (v, path, out) => {
      if (!Array.isArray(v)) {
        out.push({ path, expected, found: typeName(v) });
        return;
      }
      for (let i = 0; i < v.length; i++) items.check(v[i], `${path}[${i}]`, out);
    },
  };
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const join = (path: string, key: string): string => (IDENTIFIER.test(key) ? (path === '' ? key : `${path}.${key}`) : `${path}[${JSON.stringify(key)}]`);

/**
 * An object with these fields (T: the result type they come from, so that a field's name is
 * checked by tsc); a field not listed is not read, and not checked.
 */
export function obj<T = Record<string, unknown>>(fields: { readonly [K in keyof T]?: Field }): Shape {
  const entries = Object.entries(fields as Record<string, Field>);
  return {
    expected: 'an object',
    check: (v, path, out) => {
      if (!isRecord(v)) {
        out.push({ path, expected: 'an object', found: typeName(v) });
        return;
      }
      for (const [key, field] of entries) {
        const value = v[key];
        if ('optional' in field) {
          if (value !== undefined) field.optional.check(value, join(path, key), out);
        } else if (value === undefined) out.push({ path: join(path, key), expected: field.expected, found: 'missing' });
        else field.check(value, join(path, key), out);
      }
    },
  };
}

/** An object whose every value is `values` (`noun`: what they are, in the plural). */
export function record(noun: string, values: Shape): Shape {
  const expected = `an object of ${noun}`;
  return {
    expected,
    check: (v, path, out) => {
      if (!isRecord(v)) {
        out.push({ path, expected, found: typeName(v) });
        return;
      }
      for (const [key, value] of Object.entries(v)) values.check(value, join(path, key), out);
    },
  };
}

/**
 * One document type of several, told apart by `field` (dlq-demo's mode "strategy", retry-demo's
 * mode "ladder"): its value picks a shape from `cases`; without the field, `otherwise`.
 */
export function byField(field: string, cases: Readonly<Record<string, Shape>>, otherwise: Shape): Shape {
  const names = Object.keys(cases).map((k) => JSON.stringify(k));
  const expected = `${names.join(' or ')}, or no ${field}`;
  return {
    expected: otherwise.expected,
    check: (v, path, out) => {
      const tag = isRecord(v) ? v[field] : undefined;
      const shape = tag === undefined ? otherwise : typeof tag === 'string' && Object.hasOwn(cases, tag) ? cases[tag] : undefined;
      if (shape) shape.check(v, path, out);
      else out.push({ path: join(path, field), expected, found: typeof tag === 'string' ? JSON.stringify(tag).slice(0, 40) : typeName(tag) });
    },
  };
}
