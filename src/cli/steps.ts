import type { Progress } from '../progress.js';

/**
 * Workshop steps: each step is announced on stderr; without --auto, and only when stdin is a
 * TTY, the demo waits for Enter before going on. CI (no TTY) never waits.
 */
export function createStepper(options: { auto: boolean; progress: Progress; signal: AbortSignal }): (title: string) => Promise<void> {
  let n = 0;
  const interactive = !options.auto && process.stdin.isTTY === true;
  return async (title: string) => {
    n += 1;
    options.progress.info(`step ${n}: ${title}`);
    if (!interactive || options.signal.aborted) return;
    // readline only when a step waits: the demos' command files load this module at start-up, --help included.
    const { createInterface } = await import('node:readline/promises');
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      await rl.question('  (Enter to go on) ', { signal: options.signal });
    } catch {
      /* Ctrl+C: the demo's own checks see the signal */
    } finally {
      rl.close();
    }
  };
}
