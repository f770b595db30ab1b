/**
 * The producer's hidden harness options, for producer-crash, which runs `rmq-bench producer` as
 * a child and SIGKILLs it. No runtime imports: the CLI re-exports harnessPrinter.
 */
export interface ProducerHarness {
  /** The message ids' run (outbox: used when the file is created). */
  runId: string | undefined;
  /** First sequence to publish: a naive restart. */
  startAt: number;
  /** Print `sent <n>` on stdout every this many messages. */
  printSentEvery: number | undefined;
  /** Print `at <n>` on stdout as the run advances. */
  progressLines: boolean;
}

/**
 * The lines a parent process (producer-crash) reads on stdout: `at <n>` after every message
 * (where the run is), and with --print-sent `sent <n>` every so many messages (the naive
 * producer's own log: the number a restart resumes after). Written synchronously (a pipe
 * on Linux), so that what the parent has read is what the producer had printed when killed.
 */
export function harnessPrinter(
  h: ProducerHarness | undefined,
  write: (s: string) => void = (s) => process.stdout.write(s),
): ((position: number) => void) | undefined {
  if (!h || (!h.progressLines && h.printSentEvery === undefined)) return undefined;
  return (position) => {
    let out = h.progressLines ? `at ${position}\n` : '';
    if (h.printSentEvery !== undefined && position % h.printSentEvery === 0) out += `sent ${position - 1}\n`;
    if (out) write(out);
  };
}
