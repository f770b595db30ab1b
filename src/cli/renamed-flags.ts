/**
 * Flags renamed so that one name has one meaning (CHANGELOG.md, vocabulary.ts): per command
 * (a nested one as 'dlq inspect'), old spelling -> new. The old spelling still works for one
 * release: it is rewritten before the command line is parsed, and a one-line notice says so on
 * stderr. No imports: main.ts reads it before anything.
 */
export const RENAMED_FLAGS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  // --report was a message ledger, not a report (rmq-bench report makes those).
  producer: { '--report': '--ledger' },
  // --idle is a timeout like every other "stop after this long": --idle-timeout, as consumer's.
  verify: { '--report': '--ledger', '--idle': '--idle-timeout' },
  // alarm-demo's --deadline is its deadline publisher's --blocked-timeout: producer's name for it.
  'alarm-demo': { '--idle': '--idle-timeout', '--deadline': '--blocked-timeout' },
  // --mode and -z/--time: bench's publish modes are producer's --confirm-mode, and how long traffic flows is chaos's --duration.
  bench: { '--mode': '--confirm-mode', '--time': '--duration' },
  // compare's --mode chose the confirms side; how long a fault stays on is --hold (chaos, dlq-demo, alarm-demo).
  compare: { '--mode': '--confirms', '--restore-after': '--hold', '--management-url': '--management-urls' },
  failover: { '--restore-after': '--hold' },
  // A list of URLs, as --urls.
  chaos: { '--management-url': '--management-urls' },
  watch: { '--management-url': '--management-urls' },
  audit: { '--management-url': '--management-urls' },
  // --timeout is a deadline (cluster up, cluster reset); the value under test is named as RabbitMQ names it.
  'consumer-timeout-demo': { '--timeout': '--consumer-timeout' },
  // -n/--count is what a command publishes or processes; at most N of what is in a queue is --limit.
  'dlq inspect': { '-n': '--limit', '--count': '--limit' },
  'dlq replay': { '-n': '--limit', '--count': '--limit' },
  // Every other page a command writes is --html <file>.
  report: { '-o': '--html', '--output': '--html' },
};

/**
 * The command line with renamed flags in their new spelling, and a notice for each old one used.
 * The command is the first word that is not an option (with the next word, when the table has
 * the pair: `dlq inspect`); `--` ends the options. A short flag is renamed also with its value
 * attached (`-n5`). Pure.
 */
export function renameFlags(args: readonly string[]): { args: string[]; notices: string[] } {
  const commandAt = args.findIndex((a) => !a.startsWith('-'));
  if (commandAt === -1) return { args: [...args], notices: [] };
  const nested = `${args[commandAt]} ${args[commandAt + 1] ?? ''}`;
  const commandEnd = RENAMED_FLAGS[nested] === undefined ? commandAt : commandAt + 1;
  const table = RENAMED_FLAGS[nested] ?? RENAMED_FLAGS[args[commandAt]!];
  if (table === undefined) return { args: [...args], notices: [] };
  const notices = new Set<string>();
  const renamed = (flag: string, to: string): string => {
    notices.add(`rmq-bench: ${flag} is now ${to} (the old name goes in a later release)`);
    return to;
  };
  let ended = false;
  const out = args.flatMap((a, i) => {
    if (i <= commandEnd || ended) return [a];
    if (a === '--') {
      ended = true;
      return [a];
    }
    const [flag, ...value] = a.split('=');
    const to = table[flag!];
    if (to !== undefined) return [[renamed(flag!, to), ...value].join('=')];
    const short = /^-[^-]/.test(a) ? table[a.slice(0, 2)] : undefined;
    return short === undefined ? [a] : [renamed(a.slice(0, 2), short), a.slice(2)];
  });
  return { args: out, notices: [...notices] };
}
