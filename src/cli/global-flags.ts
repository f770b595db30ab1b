/**
 * Flags every command takes, anywhere on the command line (before a `--`): --quiet (no progress
 * on stderr, as RMQ_BENCH_QUIET=1) and --no-color (as NO_COLOR=1). main.ts takes them out before
 * the command line is parsed and sets the variables, which the binary and the processes it starts
 * read; the root help lists them. Pure.
 */
export const GLOBAL_FLAGS = {
  '--quiet': { env: 'RMQ_BENCH_QUIET', help: 'no progress on stderr, as RMQ_BENCH_QUIET=1 (anywhere on the line)' },
  '--no-color': { env: 'NO_COLOR', help: 'no colour anywhere, as NO_COLOR=1 (anywhere on the line)' },
} as const;

type GlobalFlag = keyof typeof GLOBAL_FLAGS;

const isGlobalFlag = (a: string): a is GlobalFlag => Object.hasOwn(GLOBAL_FLAGS, a);

/** The command line without the global flags, and the variables they set. */
export function takeGlobalFlags(args: readonly string[]): { args: string[]; env: Record<string, string> } {
  const end = args.indexOf('--');
  const env: Record<string, string> = {};
  const out = args.filter((a, i) => {
    if ((end !== -1 && i > end) || !isGlobalFlag(a)) return true;
    env[GLOBAL_FLAGS[a].env] = '1';
    return false;
  });
  return { args: out, env };
}
