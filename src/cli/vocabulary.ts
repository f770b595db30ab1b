/**
 * One flag name per concept, across every command. Each concept that more than one command
 * takes (or that once had two names) has its one flag here, with its value name and the other
 * spellings it must never be declared under; test/unit/vocabulary.test.ts reads every command's
 * options against this table (and against RENAMED_FLAGS, where the old spellings live on as
 * rewrites with a notice). A new option with a concept already here takes its flag; a new
 * concept two commands share comes here first. Pure data: nothing imports it at run time.
 */
export interface Concept {
  /** The one long flag. */
  readonly flag: string;
  /** Its short flag, where a command has one (no command uses the letter for anything else). */
  readonly short?: string;
  /** Its value name in --help (units in the name where the value has one). */
  readonly value: string;
  /** The value name where a command takes several and runs each in turn (bench's --window 64,256). */
  readonly sweep?: string;
  /** Other names for the same thing: no command declares them, hidden or not. */
  readonly synonyms: readonly string[];
  /** What every description of the flag says, where one name has been given to two meanings. */
  readonly means?: RegExp;
}

export const VOCABULARY = {
  duration: { flag: '--duration', short: '-z', value: '<duration>', synonyms: ['--time', '--run-time', '--for'] },
  hold: { flag: '--hold', value: '<duration>', synonyms: ['--restore-after', '--fault-duration', '--hold-for'] },
  idleTimeout: { flag: '--idle-timeout', value: '<duration>', synonyms: ['--idle', '--quiet-timeout'] },
  timeout: { flag: '--timeout', value: '<duration>', synonyms: [], means: /^deadline\b/ },
  blockedTimeout: { flag: '--blocked-timeout', value: '<duration>', synonyms: ['--deadline', '--block-timeout'] },
  consumerTimeout: { flag: '--consumer-timeout', value: '<duration>', synonyms: [] },
  confirmMode: { flag: '--confirm-mode', value: '<mode>', sweep: '<list>', synonyms: ['--mode', '--confirm-modes', '--publish-mode'] },
  confirms: { flag: '--confirms', value: '[bool]', sweep: '[side]', synonyms: ['--confirm', '--publisher-confirms'] },
  count: { flag: '--count', short: '-n', value: '<n>', synonyms: ['--messages', '--message-count'], means: /^(?!show|list|replay)/ },
  limit: { flag: '--limit', value: '<n>', synonyms: ['--max-messages'] },
  urls: { flag: '--urls', value: '<list>', synonyms: ['--url', '--uri', '--uris'] },
  managementUrls: { flag: '--management-urls', value: '<list>', synonyms: ['--management-url', '--management-uri', '--mgmt-url'] },
  html: { flag: '--html', value: '<file>', synonyms: ['--output', '-o', '--html-file', '--page'] },
  ledger: { flag: '--ledger', value: '<file>', synonyms: ['--report', '--ledger-file'] },
  rate: { flag: '--rate', short: '-r', value: '<n>', synonyms: ['--publish-rate'] },
  size: { flag: '--size', short: '-s', value: '<bytes>', synonyms: ['--body-size', '--message-size'] },
  producers: { flag: '--producers', short: '-x', value: '<n>', synonyms: ['--publishers'] },
  consumers: { flag: '--consumers', short: '-y', value: '<n>', synonyms: [] },
  window: { flag: '--window', value: '<n>', sweep: '<list>', synonyms: ['--confirm-window', '--outstanding'] },
  prefetch: { flag: '--prefetch', value: '<n>', sweep: '<list>', synonyms: ['--qos'] },
  runs: { flag: '--runs', value: '<k>', synonyms: ['--repeat', '--repeats'] },
  fault: { flag: '--fault', value: '<kind>', synonyms: ['--fault-kind'] },
  via: { flag: '--via', value: '<how>', sweep: '<ways>', synonyms: ['--set-by'] },
  work: { flag: '--work', value: '<duration>', synonyms: ['--work-time', '--processing-time'] },
} as const satisfies Readonly<Record<string, Concept>>;

/**
 * A flag next to its plural (or singular) on purpose: two concepts, not one under two names.
 * Any other such pair is one concept twice (--mode and --modes, --management-url and --urls).
 */
export const DISTINCT_PLURALS: readonly (readonly [string, string, string])[] = [
  ['--fault', '--faults', "one fault kind vs chaos's list of kinds its nemesis picks from"],
  ['--queue', '--queues', 'a queue name vs how many queues'],
  ['--node', '--nodes', "a node's name vs how many nodes"],
];
