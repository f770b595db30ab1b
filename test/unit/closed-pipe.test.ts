import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';

/**
 * `rmq-bench --help | head -1`: a reader that stops early ends rmq-bench quietly, with 141 (as a
 * shell reports SIGPIPE), not with an EPIPE stack. The binary itself runs here, in a child
 * process, since what is tested is how the process ends: it loads dist/, which scripts/test.sh
 * and `npm test` build before the unit tests.
 */

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'rmq-bench.js');

beforeAll(() => {
  if (!existsSync(path.join(ROOT, 'dist', 'cli', 'main.js'))) throw new Error('dist/ is not built: run npx tsc -p tsconfig.json first');
});

type Reader = 'closed at once' | 'closed after the first chunk';

/** Runs `rmq-bench <args>` with `stream` piped into a reader that goes away; the other stream is collected. */
function run(args: string[], stream: 'stdout' | 'stderr', reader: Reader): Promise<{ code: number | null; signal: string | null; other: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    const closing = child[stream];
    const other = stream === 'stdout' ? child.stderr : child.stdout;
    let text = '';
    other.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
    });
    // At once: the reader is gone before the child writes (it is still loading), so a write fails
    // for certain. After the first chunk: as head -1 does; whether a later write fails is a race.
    if (reader === 'closed at once') closing.destroy();
    else closing.once('data', () => closing.destroy());
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, other: text }));
  });
}

// Each case starts the binary: under scripts/test.sh the machine is saturated by five clusters,
// and a start that takes 0.5 s idle took more than vitest's default 5 s there (one run).
describe('a closed stdout or stderr: no stack, exit 141', { timeout: 60_000 }, () => {
  it.each([[['--help']], [['producer', '--help']], [['--version']], [['completion', 'bash']]])(
    'rmq-bench %j, stdout closed at once: nothing on stderr, exit 141',
    async (args) => {
      const r = await run(args, 'stdout', 'closed at once');
      expect(r.other).toBe('');
      expect(r.code).toBe(ExitCode.closedPipe);
    },
  );

  it('rmq-bench --help | head -1 (stdout closed after the first chunk): nothing on stderr, 141 or, when the help was all written first, 0', async () => {
    const r = await run(['--help'], 'stdout', 'closed after the first chunk');
    expect(r.other).toBe('');
    expect(r.signal).toBeNull();
    expect([ExitCode.ok, ExitCode.closedPipe]).toContain(r.code);
  });

  it('rmq-bench cluster (its help on stderr, then 1), stderr closed at once: 141, not a crash', async () => {
    const r = await run(['cluster'], 'stderr', 'closed at once');
    expect(r.other).toBe('');
    expect(r.code).toBe(ExitCode.closedPipe);
  });
});
