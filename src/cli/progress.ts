import type { Ora } from 'ora';
import { silentProgress, type Progress } from '../progress.js';

/**
 * The terminal's Progress (see src/progress.ts), on stderr. On a TTY: an ora spinner. Elsewhere
 * (CI logs, pipes): one plain line per finished step and no spinner frames.
 */

// ora (and what it pulls in) only when a spinner can be shown: off a TTY it would only cost memory.
const ora: typeof import('ora').default | undefined = process.stderr.isTTY ? (await import('ora')).default : undefined;

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

class SpinnerProgress implements Progress {
  private spinner: Ora | undefined;
  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly ora: typeof import('ora').default,
  ) {}
  start(text: string): void {
    this.spinner?.stop();
    this.spinner = this.ora({ text, stream: this.stream }).start();
  }
  update(text: string): void {
    if (this.spinner) this.spinner.text = text;
    else this.start(text);
  }
  succeed(text?: string): void {
    if (this.spinner) this.spinner.succeed(text);
    else if (text) this.ora({ stream: this.stream }).succeed(text);
    this.spinner = undefined;
  }
  fail(text?: string): void {
    if (this.spinner) this.spinner.fail(text);
    else if (text) this.ora({ stream: this.stream }).fail(text);
    this.spinner = undefined;
  }
  info(text: string): void {
    this.withPaused(() => this.ora({ stream: this.stream }).info(text));
  }
  warn(text: string): void {
    this.withPaused(() => this.ora({ stream: this.stream }).warn(text));
  }
  stop(): void {
    this.spinner?.stop();
    this.spinner = undefined;
  }
  private withPaused(fn: () => void): void {
    const text = this.spinner?.text;
    this.spinner?.stop();
    fn();
    if (text !== undefined && this.spinner) this.spinner.start(text);
  }
}

export function createProgress(options: { quiet?: boolean; stream?: NodeJS.WriteStream } = {}): Progress {
  if (options.quiet) return silentProgress;
  const stream = options.stream ?? process.stderr;
  return stream.isTTY && ora ? new SpinnerProgress(stream, ora) : new PlainProgress(stream);
}
