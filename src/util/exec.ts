import type { execa as Execa } from 'execa';

/** execa, loaded on first use: it costs about 16 MB of RSS, and most commands never start a process. */
export async function loadExeca(): Promise<typeof Execa> {
  return (await import('execa')).execa;
}
