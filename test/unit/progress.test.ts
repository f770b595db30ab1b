import { describe, expect, it } from 'vitest';
import { MIN_SPINNER_COLUMNS, spinnerSafe } from '../../src/cli/progress.js';

describe('spinnerSafe: a spinner only where it can be drawn', () => {
  it.each([
    [{ isTTY: true, columns: 80 }, {}, true],
    [{ isTTY: true, columns: MIN_SPINNER_COLUMNS }, {}, true],
    [{ isTTY: true, columns: MIN_SPINNER_COLUMNS - 1 }, {}, false],
    // `docker run -t` from a script: a TTY that reports no width.
    [{ isTTY: true, columns: 0 }, {}, false],
    [{ isTTY: true }, {}, false],
    [{ isTTY: false, columns: 80 }, {}, false],
    [{ columns: 80 }, {}, false],
    [{ isTTY: true, columns: 80 }, { TERM: 'dumb' }, false],
    [{ isTTY: true, columns: 80 }, { TERM: 'xterm-256color' }, true],
  ])('%o with %o → %s', (stream, env, safe) => {
    expect(spinnerSafe(stream, env)).toBe(safe);
  });
});
