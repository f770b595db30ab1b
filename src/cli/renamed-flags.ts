/**
 * Flags renamed so that one name has one meaning (CHANGELOG.md): per command, old spelling ->
 * new. The old spelling still works for one release: it is rewritten before the command line is
 * parsed, and a one-line notice says so on stderr. No imports: main.ts reads it before anything.
 */
export const RENAMED_FLAGS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  // --report was a message ledger, not a report (rmq-bench report makes those).
  producer: { '--report': '--ledger' },
  verify: { '--report': '--ledger' },
  // --mode is bench's list of publish modes; compare's chooses the confirms side.
  compare: { '--mode': '--confirms' },
};

/**
 * The command line with renamed flags in their new spelling, and a notice for each old one used.
 * The command is the first word that is not an option; `--` ends the options. Pure.
 */
export function renameFlags(args: readonly string[]): { args: string[]; notices: string[] } {
  const commandAt = args.findIndex((a) => !a.startsWith('-'));
  const table = commandAt === -1 ? undefined : RENAMED_FLAGS[args[commandAt]!];
  if (table === undefined) return { args: [...args], notices: [] };
  const notices = new Set<string>();
  let ended = false;
  const out = args.map((a, i) => {
    if (i <= commandAt || ended) return a;
    if (a === '--') {
      ended = true;
      return a;
    }
    const [flag, ...value] = a.split('=');
    const renamed = table[flag!];
    if (renamed === undefined) return a;
    notices.add(`rmq-bench: ${flag} is now ${renamed} (the old name goes in a later release)`);
    return [renamed, ...value].join('=');
  });
  return { args: out, notices: [...notices] };
}
