import { type QueueTypeCommand, queueTypesFor } from '../cluster/broker/queue-types.js';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { parseUrls } from '../client/connect-any.js';
import { amqpUrl, type Config } from '../config.js';
import { maskUrlsIn } from '../url.js';
import { noUnitMessage, parseDurationMs } from '../util/duration.js';
import { bandwidthBits, DEFAULT_BANDWIDTH, DEFAULT_NETEM, type NetemSpec } from '../faults/net/netem.js';
import { UsageError } from '../errors.js';
import { PROTOCOLS } from '../client/protocol.js';

/**
 * The options several commands share (one declaration each: flags, help text, default, parser),
 * then the commander argParsers they use: validate once at the edge, with a one-line reason.
 */

export const jsonOption = (description = 'print one JSON document on stdout (people-facing output stays on stderr)'): Option =>
  new Option('--json', description).default(false);

/** --html <file>: checked at the edge (its directory must exist and be writable) so a long run never ends in an unwritable path. */
export const htmlOption = (): Option =>
  new Option('--html <file>', 'also write a self-contained HTML report (charts, the report, the JSON document)').argParser(writableFile);

/** --protocol amqp091|amqp10 (compare and bench also take both): the client library and protocol the traffic uses. */
/** --queue-type: the queue a leader fault runs against (queue-types.ts). */
export const queueTypeOption = (command: QueueTypeCommand, description: string): Option =>
  new Option('--queue-type <type>', description).choices(queueTypesFor(command)).default('quorum');

export const protocolOption = (description: string, choices: readonly string[] = PROTOCOLS): Option =>
  new Option('--protocol <protocol>', description).choices(choices).default('amqp091');

/** --urls: undefined when not given; urlsOrDefault() turns that into the cluster's three AMQP ports. */
export const urlsOption = (description = 'comma-separated AMQP URLs, tried in order on (re)connect (default: rabbit1..3 with user demo)'): Option =>
  new Option('--urls <list>', description).argParser(amqpUrlList);

/** What --urls means when not given: rabbit1..3 with the configured user. */
export function urlsOrDefault(urls: string[] | undefined, config: Config): string[] {
  return urls ?? config.nodes.map((n) => amqpUrl(config, n));
}

export const managementUrlOption = (
  description = 'management API to ask, any cluster (http://user:pass@host:15672, comma-separated: the next is asked when one does not answer)',
): Option => new Option('--management-urls <list>', description).argParser(httpUrlList);

export const vhostOption = (): Option => new Option('--vhost <name>', 'virtual host').default('/');

export const queueOption = (description: string, defaultQueue = 'demo.orders'): Option => new Option('--queue <name>', description).default(defaultQueue);

export const countOption = (description: string, defaultCount?: number): Option => {
  const o = new Option('-n, --count <n>', description).argParser(positiveInt);
  return defaultCount === undefined ? o : o.default(defaultCount);
};

/** A duration option; its default is written as a duration ('3m') and shown so in --help. */
export const durationOption = (flags: string, description: string, defaultValue?: string, parse: (value: string) => number = durationMs): Option => {
  const o = new Option(flags, description).argParser(parse);
  return defaultValue === undefined ? o : o.default(parseDurationMs(defaultValue), defaultValue);
};

/** A deadline or timeout: a duration above 0 (0 could never be met). */
export const timeoutOption = (flags: string, description: string, defaultValue?: string): Option =>
  durationOption(flags, description, defaultValue, positiveDurationMs);

/** In ms; heartbeatSeconds() makes it the AMQP value. */
export const heartbeatOption = (description = 'AMQP heartbeat'): Option => durationOption('--heartbeat <duration>', description, '5s');

/** --fault latency's netem: --latency, --jitter, --loss (all refused with any other fault). */
export const latencyOption = (): Option =>
  durationOption('--latency <duration>', `with --fault latency: delay added to everything the node sends (default: ${DEFAULT_NETEM.delayMs}ms)`);
export const jitterOption = (): Option =>
  durationOption('--jitter <duration>', `with --fault latency: variation of that delay (default: ${DEFAULT_NETEM.jitterMs}ms)`);
export const lossOption = (): Option => new Option('--loss <percent>', "with --fault latency: share of the node's packets dropped, e.g. 5%").argParser(percent);

/** The netem spec for --fault latency; the flags with any other fault are a usage error. */
export function netemFrom(fault: string, o: { latency?: number; jitter?: number; loss?: number }): NetemSpec | undefined {
  const given = (['latency', 'jitter', 'loss'] as const).filter((k) => o[k] !== undefined);
  if (fault !== 'latency') {
    if (given.length > 0) throw new UsageError(`--${given[0]} goes with --fault latency (not '${fault}')`);
    return undefined;
  }
  return { delayMs: o.latency ?? DEFAULT_NETEM.delayMs, jitterMs: o.jitter ?? DEFAULT_NETEM.jitterMs, lossPct: o.loss ?? DEFAULT_NETEM.lossPct };
}

/** --fault slow-link's rate (tc's units). */
export const bandwidthOption = (): Option =>
  new Option('--bandwidth <rate>', `with --fault slow-link: what the node may send, in tc's units: 256kbit, 2mbit (default: ${DEFAULT_BANDWIDTH})`).argParser(
    (value: string) => {
      if (bandwidthBits(value) === undefined)
        throw new InvalidArgumentError(`'${value}' is not a rate of at least 8kbit in tc's units (256kbit, 2mbit, 1gbit)`);
      return value.trim().toLowerCase();
    },
  );

/** slow-link's rate; --bandwidth with another fault (or a list without slow-link) is a usage error. */
export function bandwidthFrom(faults: readonly string[], bandwidth: string | undefined): string | undefined {
  if (!faults.includes('slow-link')) {
    if (bandwidth !== undefined) throw new UsageError(`--bandwidth goes with the slow-link fault (not ${faults.map((f) => `'${f}'`).join(', ')})`);
    return undefined;
  }
  return bandwidth ?? DEFAULT_BANDWIDTH;
}

/** A percentage: 5% or 5 (0..100). */
export function percent(value: string): number {
  const n = Number(value.trim().replace(/%$/, ''));
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 100)
    throw new InvalidArgumentError(`'${value}' is not a percentage between 0 and 100 (e.g. 5%)`);
  return n;
}

export const reconnectTimeoutOption = (): Option => timeoutOption('--reconnect-timeout <duration>', 'give up when no broker answers for this long', '60s');

/**
 * --wait-for-broker: how long the first connection waits for a broker that refuses it
 * (connect-any.ts, BrokerWait). No default here: not given, RMQ_BENCH_WAIT_FOR_BROKER or 0
 * applies (main.ts).
 */
export const waitForBrokerOption = (): Option =>
  durationOption(
    '--wait-for-broker <duration>',
    'when no broker is there at the start (connection refused), wait this long for one instead of failing at once (default: 0, or RMQ_BENCH_WAIT_FOR_BROKER)',
  );

export const rateOption = (description: string, defaultRate: number): Option =>
  new Option('-r, --rate <n>', description).argParser(nonNegativeInt).default(defaultRate);

export const sizeOption = (): Option => new Option('-s, --size <bytes>', 'message body size').argParser(nonNegativeInt).default(100);

export const windowOption = (description: string): Option => new Option('--window <n>', description).argParser(positiveInt).default(256);

export const runsOption = (description: string): Option => new Option('--runs <k>', description).argParser(positiveInt).default(1);

export const prefetchOption = (description: string, defaultPrefetch: number): Option =>
  new Option('--prefetch <n>', description).argParser(prefetchCount).default(defaultPrefetch);

/** Simulated processing time per message (it was --work-ms <ms>: a duration now, as every time option). */
export const workOption = (defaultValue: string): Option => durationOption('--work <duration>', 'simulated processing time per message', defaultValue);

export const multiAckEveryOption = (description: string, defaultEvery: number): Option =>
  new Option('--multi-ack-every <n>', description).argParser(positiveInt).default(defaultEvery);

/** The workshop demos' --auto. */
export const autoOption = (): Option => new Option('--auto', 'no pauses between steps (the default pauses only when stdin is a TTY)').default(false);

/** The options given on the command line (not defaults), by attribute name (--confirm-mode → confirmMode). */
export function givenOptions(command: Command): ReadonlySet<string> {
  return new Set(command.options.map((o) => o.attributeName()).filter((k) => command.getOptionValueSource(k) === 'cli'));
}

/** '--confirm-mode' → 'confirmMode', '--no-restore' → 'restore': the attribute commander stores a flag under. */
function attributeOf(flag: string): string {
  return flag.replace(/^--(no-)?/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/**
 * A switch that makes other options meaningless: refuse the first of `flags` given with it (a
 * default is not given), instead of silently ignoring it. `because` says why, after the flag:
 * "--window does nothing with --tx (...)".
 */
export function refuseWith(given: ReadonlySet<string>, flags: readonly string[], because: string): void {
  const hit = flags.find((f) => given.has(attributeOf(f)));
  if (hit !== undefined) throw new UsageError(`${hit} ${because}`);
}

/** --urls: comma-separated amqp(s):// URLs (the message never quotes a password). */
function amqpUrlList(value: string): string[] {
  try {
    return parseUrls(value);
  } catch (err) {
    throw new InvalidArgumentError(err instanceof Error ? err.message.replace(/^--urls: /, '') : String(err));
  }
}

/** --modes: a comma-separated list, each one of `allowed`, at least one (in the order given). */
export function choiceList<T extends string>(value: string, allowed: readonly T[]): T[] {
  const list = value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  for (const m of list) {
    if (!(allowed as readonly string[]).includes(m)) throw new InvalidArgumentError(`'${m}' is not one of ${allowed.join(', ')}`);
  }
  if (list.length === 0) throw new InvalidArgumentError('no mode given');
  return list as T[];
}

/** A duration with a unit (500ms, 5s, 1m30s); a bare number is refused with a hint, except 0. */
export function durationMs(value: string): number {
  if (/^\s*\d+(\.\d+)?\s*$/.test(value) && !/^\s*0+(\.0+)?\s*$/.test(value)) throw new InvalidArgumentError(noUnitMessage(value.trim()));
  try {
    return parseDurationMs(value);
  } catch {
    throw new InvalidArgumentError(`'${value}' is not a duration (examples: 500ms, 5s, 1m30s)`);
  }
}

/** A duration above 0: a deadline or timeout of 0 could never be met. */
export function positiveDurationMs(value: string): number {
  const ms = durationMs(value);
  if (ms <= 0) throw new InvalidArgumentError(`'${value}' is not a duration above zero`);
  return ms;
}

/** A comma-separated list of durations (`5s,30s,5m`), each above 0, at most 20. */
export function durationList(value: string): number[] {
  const parts = value.split(',').map((x) => x.trim());
  if (parts.length > 20) throw new InvalidArgumentError(`${parts.length} entries; at most 20`);
  return parts.map((part, i) => {
    const ms = durationMs(part === '' ? 'empty' : part);
    if (ms <= 0) throw new InvalidArgumentError(`entry ${i + 1} ('${part}') must be above 0`);
    return ms;
  });
}

/** A factor above 0 (`0.1` shrinks a ladder tenfold). */
export function positiveNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`'${value}' is not a number above 0`);
  return n;
}

/** A file we can create or overwrite: its directory exists and is writable, and it is not a directory. */
export function writableFile(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('no file name given');
  const dir = path.dirname(path.resolve(value));
  try {
    if (!statSync(dir).isDirectory()) throw new Error('not a directory');
    accessSync(dir, constants.W_OK);
  } catch {
    throw new InvalidArgumentError(`cannot write '${value}': directory '${dir}' does not exist or is not writable`);
  }
  let isDir = false;
  try {
    isDir = statSync(value).isDirectory();
  } catch {
    // does not exist yet: fine
  }
  if (isDir) throw new InvalidArgumentError(`'${value}' is a directory`);
  return value;
}

/** --seed: 0 .. 2^32-1. */
export function seedValue(value: string): number {
  const n = nonNegativeInt(value);
  if (n > 0xffff_ffff) throw new InvalidArgumentError(`'${value}' is above 4294967295`);
  return n;
}

/** A seed for runs given none: shown in the report, so that the run can be replayed. */
export function randomSeed(): number {
  return Math.floor(Math.random() * 0x1_0000_0000);
}

export function positiveInt(value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) throw new InvalidArgumentError(`'${value}' is not a positive whole number`);
  return Number(value);
}

export function nonNegativeInt(value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError(`'${value}' is not a whole number >= 0`);
  return Number(value);
}

/** A node's name as the bench cluster's nodes are named (rabbit1..rabbit5); a node the cluster lacks is refused where the cluster is known. */
export function nodeName(value: string): string {
  if (!/^rabbit[1-5]$/.test(value)) throw new InvalidArgumentError(`'${value}' is not a node of the bench cluster (rabbit1, rabbit2, ... rabbit5)`);
  return value;
}

/** A boolean flag that also takes =true/=false (the article's `--confirms=false`). */
export function booleanValue(value: string): boolean {
  const v = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new InvalidArgumentError(`'${value}' is not true or false`);
}

/** compare's side of confirms: on, off, or both (each run once with and once without). */
export type ConfirmsSide = 'on' | 'off' | 'both';

/**
 * compare's --confirms: on, off or both; alone, on. It takes what producer's --confirms takes
 * (true, false, yes, no, 1, 0) with the obvious meaning, so --confirms=false is off in both.
 */
export const confirmsSideOption = (): Option =>
  new Option('--confirms [side]', 'confirms on, off (or true, false), or both side by side')
    // The choices for --help and completion; the parser after them takes true and false too.
    .choices(['on', 'off', 'both'])
    .argParser(confirmsSide)
    .preset('on')
    .default('both');

export function confirmsSide(value: string): ConfirmsSide {
  if (value.trim().toLowerCase() === 'both') return 'both';
  try {
    return booleanValue(value) ? 'on' : 'off';
  } catch {
    throw new InvalidArgumentError(`'${value}' is not on, off or both (true and false say on and off)`);
  }
}

/** A share between 0 and 1 (both ends included), as a fraction (0.3) or a percentage (30%). */
export function share(value: string): number {
  const v = value.trim();
  const pct = v.endsWith('%');
  const n = Number(pct ? v.slice(0, -1).trim() : v);
  const out = pct ? n / 100 : n;
  if (v === '' || v === '%' || !Number.isFinite(n) || out < 0 || out > 1)
    throw new InvalidArgumentError(`'${value}' is not a share between 0 and 1 or a percentage between 0% and 100% (e.g. 0.3 or 30%)`);
  return out;
}

/** AMQP heartbeats are whole seconds and 0 turns them off: an explicit 0 stays 0, a short duration rounds up to 1 s. */
export function heartbeatSeconds(ms: number): number {
  return ms === 0 ? 0 : Math.max(1, Math.ceil(ms / 1000));
}

/** Mask user:password@ anywhere, scheme or not (for texts that quote malformed URLs). */
export function maskCredentialsLoosely(text: string): string {
  return maskUrlsIn(text).replace(/([^\s'"/:@]*):([^\s'"/@*]+)@/g, '$1:***@');
}

/** A prefetch count: 0 (unlimited) to 65535 (AMQP's 16-bit field). */
export function prefetchCount(value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) > 65_535) throw new InvalidArgumentError(`'${value}' is not a prefetch count (0 to 65535; 0 = unlimited)`);
  return Number(value);
}

/** --management-urls: comma-separated http(s) URLs. The message never quotes a URL (it may hold a password). */
function httpUrlList(value: string): string[] {
  const list = value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  if (list.length === 0) throw new InvalidArgumentError('no URL given');
  list.forEach((v, i) => {
    let u: URL | undefined;
    try {
      u = new URL(v);
    } catch {
      u = undefined;
    }
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '') {
      throw new InvalidArgumentError(`entry ${i + 1} is not an http(s):// URL`);
    }
  });
  return list;
}
