import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { colourWanted } from '../../src/cli/colour.js';
import { createProgress, MIN_SPINNER_COLUMNS, spinnerSafe } from '../../src/cli/progress.js';

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

describe('NO_COLOR: honoured by everything, spinners included', () => {
  it.each([
    [{ isTTY: true, hasColors: () => true }, {}, true],
    [{ isTTY: true, hasColors: () => true }, { NO_COLOR: '1' }, false],
    [{ isTTY: true, hasColors: () => true }, { NO_COLOR: 'anything' }, false],
    // no-color.org: an empty NO_COLOR is as if unset.
    [{ isTTY: true, hasColors: () => true }, { NO_COLOR: '' }, true],
    [{ isTTY: true, hasColors: () => true }, { FORCE_COLOR: '0' }, false],
    [{ isTTY: true, hasColors: () => false }, {}, false],
    [{ isTTY: false, hasColors: () => true }, {}, false],
    // FORCE_COLOR: colour off a TTY too (a pipe into less -R), unless NO_COLOR or --no-color says never.
    [{ isTTY: false }, { FORCE_COLOR: '1' }, true],
    [{}, { FORCE_COLOR: '' }, true],
    [{ isTTY: false }, { FORCE_COLOR: 'false' }, false],
    [{ isTTY: true, hasColors: () => true }, { FORCE_COLOR: '1', NO_COLOR: '1' }, false],
  ])('%o with %o → colours %s', (stream, env, allowed) => {
    expect(colourWanted(stream, env)).toBe(allowed);
  });

  /** A terminal 80 columns wide that says it has colours, recording what is written. */
  function fakeTty(): NodeJS.WriteStream & { text: () => string } {
    const chunks: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        chunks.push(String(chunk));
        done();
      },
    }) as unknown as NodeJS.WriteStream & { text: () => string };
    Object.assign(stream, {
      isTTY: true,
      columns: 80,
      hasColors: () => true,
      cursorTo: () => true,
      clearLine: () => true,
      moveCursor: () => true,
      text: () => chunks.join(''),
    });
    return stream;
  }

  it('with NO_COLOR the spinner gets no colour and its marks are plain: no SGR sequence written', async () => {
    const { default: ora } = await import('ora');
    const seen: unknown[] = [];
    const spy = ((o: Parameters<typeof ora>[0]) => {
      seen.push(o);
      return ora(o);
    }) as typeof ora;
    const stream = fakeTty();
    const progress = createProgress({ stream, env: { NO_COLOR: '1', TERM: 'xterm-256color' }, ora: spy });
    progress.start('connecting');
    progress.succeed('connected');
    progress.info('a note');
    progress.fail('lost it');
    progress.stop();
    expect(seen.length).toBeGreaterThan(0);
    for (const o of seen) expect(o).toMatchObject({ color: false });
    // No SGR sequence (ESC [ ... m): ora's cursor codes stay, colours do not.
    expect(stream.text()).not.toMatch(new RegExp(`${String.fromCharCode(27)}\\[[\\d;]*m`));
    expect(stream.text()).toContain('✔ connected');
    expect(stream.text()).toContain('✖ lost it');
  });
});
