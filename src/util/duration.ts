import { UsageError } from '../errors.js';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * '250ms' | '5s' | '1.5s' | '2m' | '1h' | '1m30s' → milliseconds. A duration has a unit: a bare
 * number is refused with a hint (it once meant seconds here and milliseconds there), except 0,
 * which is zero in any unit. Throws UsageError naming the flag on anything else.
 */
export function parseDurationMs(text: string, flag = 'duration'): number {
  const s = text.trim().toLowerCase();
  if (/^0+(\.0+)?$/.test(s)) return 0;
  if (/^\d+(\.\d+)?$/.test(s)) throw new UsageError(`${flag}: ${noUnitMessage(text.trim())}`);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(s); m !== null; m = re.exec(s)) {
    total += Number(m[1]) * (UNIT_MS[m[2]!] ?? 0);
    consumed = re.lastIndex;
  }
  if (s === '' || consumed !== s.length) {
    throw new UsageError(`${flag}: '${text}' is not a duration (examples: 500ms, 5s, 1m30s)`);
  }
  return Math.round(total);
}

/** The one-line reason a bare number is not a duration, with the two spellings it may have meant. */
export function noUnitMessage(bare: string): string {
  return `'${bare}' has no unit: write ${bare}ms or ${bare}s`;
}

/**
 * Milliseconds as a user would type them back: 500ms, 5s, 1.5s, 2m, 1m30s, 1h. The inverse of
 * parseDurationMs for messages that quote an option's value.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  const whole = Math.round(ms);
  if (whole === 0) return '0s';
  if (whole < 1000 || whole % 100 !== 0) return `${whole}ms`;
  if (whole < 60_000 || whole % 1000 !== 0) return `${whole / 1000}s`;
  let rest = whole / 1000;
  const h = Math.floor(rest / 3600);
  rest -= h * 3600;
  const m = Math.floor(rest / 60);
  const sec = rest - m * 60;
  return `${h > 0 ? `${h}h` : ''}${m > 0 ? `${m}m` : ''}${sec > 0 ? `${sec}s` : ''}`;
}

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const totalS = Math.round(ms / 1000);
  return `${Math.floor(totalS / 60)} m ${totalS % 60} s`;
}
