import { UsageError } from '../errors.js';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * '250ms' | '5s' | '1.5s' | '2m' | '1h' | '1m30s' → milliseconds. A bare number is seconds.
 * Throws UsageError naming the flag on anything else.
 */
export function parseDurationMs(text: string, flag = 'duration'): number {
  const s = text.trim().toLowerCase();
  if (/^\d+(\.\d+)?$/.test(s)) return Math.round(Number(s) * 1000);
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

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const totalS = Math.round(ms / 1000);
  return `${Math.floor(totalS / 60)} m ${totalS % 60} s`;
}
