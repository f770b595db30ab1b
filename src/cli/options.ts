import { InvalidArgumentError, Option } from 'commander';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { maskUrlsIn } from '../url.js';
import { parseDurationMs } from '../util/duration.js';

/** commander argParsers: validate once at the edge, with a one-line reason. */

export function durationMs(value: string): number {
  try {
    return parseDurationMs(value);
  } catch {
    throw new InvalidArgumentError(`'${value}' is not a duration (examples: 500ms, 5s, 1m30s)`);
  }
}

/** Milliseconds: a bare number is ms (`--min 2000`), or a duration (`2s`). */
export function millisOrDuration(value: string): number {
  if (/^\d+$/.test(value.trim())) return Number(value);
  return durationMs(value);
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

export function positiveInt(value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) throw new InvalidArgumentError(`'${value}' is not a positive whole number`);
  return Number(value);
}

export function nonNegativeInt(value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError(`'${value}' is not a whole number >= 0`);
  return Number(value);
}

export function nodeName(value: string): string {
  if (!/^rabbit[1-3]$/.test(value)) throw new InvalidArgumentError(`'${value}' is not a node of the bench cluster (rabbit1, rabbit2, rabbit3)`);
  return value;
}

/** A boolean flag that also takes =true/=false (the article's `--confirms=false`). */
export function booleanValue(value: string): boolean {
  const v = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new InvalidArgumentError(`'${value}' is not true or false`);
}

/** A share between 0 and 1 (exclusive of neither end). */
export function share(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError(`'${value}' is not a number between 0 and 1`);
  return n;
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

/** --html <file>: checked at the edge (its directory must exist and be writable) so a long run never ends in an unwritable path. */
export const htmlOption = (): Option =>
  new Option('--html <file>', 'also write a self-contained HTML report (charts, the report, the JSON document)').argParser(writableFile);

/** --management-url: comma-separated http(s) URLs. The message never quotes a URL (it may hold a password). */
export function httpUrlList(value: string): string[] {
  const list = value.split(',').map((v) => v.trim()).filter(Boolean);
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
