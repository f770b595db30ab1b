import type { Shape } from './shape-check.js';

/**
 * What rmq-bench shows of one kind of result (compare, chaos, dlq-demo...): its terminal report,
 * its charts, and what `rmq-bench report` reads of its --json document. One per kind, in
 * report/kinds/<kind>/view.ts, listed once in report/kinds.ts; a kind without one of these does not
 * compile. R: the result the command prints (its --json document, less schemaVersion and kind).
 */
export interface KindView<R> {
  /**
   * What `rmq-bench report` reads of a document of this kind beyond the verdict fields every
   * document may carry (ok, problems, reasons), and of which type (shape-check.ts); null: nothing
   * more. A field is required when a chart cannot be drawn right without it; optional when the
   * report does without it (the key figures say "?"). The report reads a document as R only once
   * its fields match this shape.
   */
  readonly shape: Shape | null;
  /** The terminal report of a result. */
  readonly text: (r: R) => string;
  /** Its charts, for --html and `rmq-bench report`; [] for none. */
  readonly charts: (r: R) => string[];
  /**
   * The figures it is about, in one line, for the report's summary ("confirms-off: lost 120...").
   * '' (or a line without a digit) for the fallback: the document's top-level numbers.
   */
  readonly figures: (r: R) => string;
  /**
   * Why it failed, beyond what every document says of itself (its problems and reasons, the claims
   * not held, each run's problems: report/doc-figures.ts); [] for nothing more.
   */
  readonly reasons: (r: R) => string[];
  /** Its verdict when it carries no `ok` of its own (verify: its reconciliation's). */
  readonly verdict?: (r: R) => boolean | null;
}

/** For a kind without charts, or without reasons of its own. */
export const none = (): string[] => [];
