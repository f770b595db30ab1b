import type { Ora } from 'ora';
import { silentProgress, type Progress } from '../progress.js';
import { colourWanted } from './colour.js';

/**
 * The terminal's Progress (see src/progress.ts), on stderr. On a TTY: an ora spinner. Elsewhere
 * (CI logs, pipes): one plain line per finished step and no spinner frames.
 */

// ora (and what it pulls in) only when a spinner can be shown: off a TTY it would only cost memory.
const ora: typeof import('ora').default | undefined = process.stderr.isTTY ? (await import('ora')).default : undefined;

/**
 * A spinner redraws by moving the cursor up over its own lines, which it counts from the
 * terminal's width. A TTY that reports 0 columns (`docker run -t` from a script, some CI runners)
 * makes that count endless: ora then writes cursor codes forever (4.6 MB in 4 s, measured, and
 * the process never ends). Below this width, plain lines instead.
 */
export const MIN_SPINNER_COLUMNS = 20;

/** Whether a spinner can be drawn on this stream now: a TTY, a usable width, a terminal that moves the cursor. Pure. */
export function spinnerSafe(stream: { isTTY?: boolean; columns?: number }, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && (stream.columns ?? 0) >= MIN_SPINNER_COLUMNS && env.TERM !== 'dumb';
}

/** The persisted lines' marks, uncoloured (ora's own come from log-symbols, coloured at import). */
const MARKS = { succeed: '✔', fail: '✖', info: 'ℹ', warn: '⚠' } as const;

/** Off a TTY, a long step still shows a line now and then: at most one every PLAIN_EVERY_MS. */
const PLAIN_EVERY_MS = 10_000;

class PlainProgress implements Progress {
  private current: string | undefined;
  private startedAt = 0;
  private lastLineAt = performance.now();
  constructor(private readonly stream: NodeJS.WritableStream) {}
  private line(mark: string, text: string): void {
    this.lastLineAt = performance.now();
    this.stream.write(`${mark} ${text}\n`);
  }
  start(text: string): void {
    this.current = text;
    this.startedAt = performance.now();
  }
  update(text: string): void {
    this.current = text;
    if (performance.now() - this.lastLineAt >= PLAIN_EVERY_MS) this.line('…', text);
  }
  succeed(text?: string): void {
    const t = text ?? this.current;
    if (t) this.line('✔', t);
    this.current = undefined;
  }
  fail(text?: string): void {
    const t = text ?? this.current;
    if (t) this.line('✖', t);
    this.current = undefined;
  }
  info(text: string): void {
    this.line('ℹ', text);
  }
  warn(text: string): void {
    this.line('⚠', text);
  }
  stop(): void {
    this.current = undefined;
  }
  elapsedMs(): number {
    return performance.now() - this.startedAt;
  }
}

/**
 * The spinner, while the terminal can draw it: the width is checked at every call, so a window
 * resized to nothing (or a pty that never had a width) falls back to plain lines for good.
 */
class SpinnerProgress implements Progress {
  private spinner: Ora | undefined;
  private plain: PlainProgress | undefined;
  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly oraFactory: typeof import('ora').default,
    private readonly colors: boolean,
  ) {}
  /** ora, coloured only when colours are allowed (NO_COLOR: a plain frame). */
  private ora(options: { text?: string; stream: NodeJS.WriteStream }): Ora {
    return this.oraFactory({ ...options, ...(this.colors ? {} : { color: false }) });
  }
  /** A finished line: ora's coloured mark, or the plain one under NO_COLOR. */
  private persist(spinner: Ora, kind: keyof typeof MARKS, text?: string): void {
    if (this.colors) spinner[kind](text);
    else spinner.stopAndPersist({ symbol: MARKS[kind], ...(text === undefined ? {} : { text }) });
  }
  /** The plain fallback once the spinner is no longer safe (the spinner stopped first). */
  private fallback(): PlainProgress | undefined {
    if (!this.plain && spinnerSafe(this.stream)) return undefined;
    if (!this.plain) {
      const text = this.spinner?.text;
      this.spinner?.stop();
      this.spinner = undefined;
      this.plain = new PlainProgress(this.stream);
      if (text) this.plain.start(text);
    }
    return this.plain;
  }
  start(text: string): void {
    const plain = this.fallback();
    if (plain) {
      plain.start(text);
      return;
    }
    this.spinner?.stop();
    this.spinner = this.ora({ text, stream: this.stream }).start();
  }
  update(text: string): void {
    const plain = this.fallback();
    if (plain) {
      plain.update(text);
      return;
    }
    if (this.spinner) this.spinner.text = text;
    else this.start(text);
  }
  succeed(text?: string): void {
    const plain = this.fallback();
    if (plain) {
      plain.succeed(text);
      return;
    }
    if (this.spinner) this.persist(this.spinner, 'succeed', text);
    else if (text) this.persist(this.ora({ stream: this.stream }), 'succeed', text);
    this.spinner = undefined;
  }
  fail(text?: string): void {
    const plain = this.fallback();
    if (plain) {
      plain.fail(text);
      return;
    }
    if (this.spinner) this.persist(this.spinner, 'fail', text);
    else if (text) this.persist(this.ora({ stream: this.stream }), 'fail', text);
    this.spinner = undefined;
  }
  info(text: string): void {
    const plain = this.fallback();
    if (plain) {
      plain.info(text);
      return;
    }
    this.withPaused(() => this.persist(this.ora({ stream: this.stream }), 'info', text));
  }
  warn(text: string): void {
    const plain = this.fallback();
    if (plain) {
      plain.warn(text);
      return;
    }
    this.withPaused(() => this.persist(this.ora({ stream: this.stream }), 'warn', text));
  }
  stop(): void {
    this.spinner?.stop();
    this.spinner = undefined;
    this.plain?.stop();
  }
  private withPaused(fn: () => void): void {
    const text = this.spinner?.text;
    this.spinner?.stop();
    fn();
    if (text !== undefined && this.spinner) this.spinner.start(text);
  }
}

export function createProgress(
  options: { quiet?: boolean; stream?: NodeJS.WriteStream; env?: NodeJS.ProcessEnv; ora?: typeof import('ora').default } = {},
): Progress {
  if (options.quiet) return silentProgress;
  const stream = options.stream ?? process.stderr;
  const env = options.env ?? process.env;
  const factory = options.ora ?? ora;
  return spinnerSafe(stream, env) && factory ? new SpinnerProgress(stream, factory, colourWanted(stream, env)) : new PlainProgress(stream);
}
