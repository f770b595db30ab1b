import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// Commit subjects are one line of at most 72 characters, the detail in the body. The older
// history wrote diaries into its subjects: the commits checked are those committed after the
// last of them, by commit time, so that a shallow clone is checked the same way.
const AFTER_COMMIT_TIME_S = 1796531773;
const MAX = 72;

describe('commit subjects', () => {
  it(`are at most ${MAX} characters`, () => {
    const log = execFileSync('git', ['log', '--format=%ct %h %s', 'HEAD'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const commits = log
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        const [time, hash, ...subject] = l.split(' ');
        return { time: Number(time), hash: hash!, subject: subject.join(' ') };
      })
      .filter((c) => c.time > AFTER_COMMIT_TIME_S);
    expect(commits.length).toBeGreaterThan(0);
    expect(commits.filter((c) => c.subject.length > MAX).map((c) => `${c.hash} ${c.subject}`)).toEqual([]);
  });
});
