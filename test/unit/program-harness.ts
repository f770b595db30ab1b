import type { Command } from 'commander';
import { afterEach, beforeEach, expect, vi } from 'vitest';
import { createProgram, type Invocation } from '../../src/cli/program.js';

/**
 * The harness the argv → options tests share: createProgram with a dispatch that only records,
 * and process.stdout / process.stderr captured (commander prints its errors and help there).
 */

/** What process.stderr and process.stdout were given during the current test, chunk by chunk. */
export interface CapturedOutput {
  readonly stderr: string[];
  readonly stdout: string[];
}

/**
 * Captures process.stderr.write and process.stdout.write for each test of the calling scope (the
 * file, or the describe it is called in), and restores every mock after each test. The arrays
 * it returns stay the same ones, emptied before each test.
 */
export function captureOutput(): CapturedOutput {
  const output: CapturedOutput = { stderr: [], stdout: [] };
  beforeEach(() => {
    output.stderr.length = 0;
    output.stdout.length = 0;
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => output.stderr.push(String(chunk)) > 0);
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => output.stdout.push(String(chunk)) > 0);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  return output;
}

/** A dispatch that records each invocation instead of running it. */
export function recorder(): { dispatch: (i: Invocation) => Promise<void>; calls: Invocation[] } {
  const calls: Invocation[] = [];
  return {
    calls,
    dispatch: async (i) => {
      calls.push(i);
    },
  };
}

/** `rmq-bench <args>` parsed: what was dispatched, and what the parse rejected with (undefined if it resolved). */
export async function parse(args: string[]): Promise<{ calls: Invocation[]; err: unknown }> {
  const r = recorder();
  const err = await createProgram(r.dispatch)
    .parseAsync(['node', 'rmq-bench', ...args])
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  return { calls: r.calls, err };
}

/** The one invocation `rmq-bench <args>` dispatches; rejects with the parse's error. */
export async function invocationOf(args: string[]): Promise<Invocation> {
  const { calls, err } = await parse(args);
  if (err !== undefined) throw err;
  expect(calls).toHaveLength(1);
  return calls[0]!;
}

/** Every runnable command under `c` as [its argv words, the command]. */
export function leaves(c: Command, prefix: string[] = []): [string[], Command][] {
  return c.commands.flatMap((sub) => {
    const words = [...prefix, sub.name()];
    return sub.commands.length > 0 ? leaves(sub, words) : [[words, sub] as [string[], Command]];
  });
}
