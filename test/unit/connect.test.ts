import { describe, expect, it } from 'vitest';
import { withHeartbeat } from '../../src/client/amqp091/connect.js';
import { backoffMs, parseUrls } from '../../src/client/connect-any.js';
import { ExitCode, UsageError } from '../../src/errors.js';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe('parseUrls: accepted lists', () => {
  const cases: { name: string; text: string; expected: string[] }[] = [
    { name: 'one URL', text: 'amqp://demo:demo@127.0.0.1:5672', expected: ['amqp://demo:demo@127.0.0.1:5672'] },
    {
      name: 'comma list, in order',
      text: 'amqp://a:b@127.0.0.1:5672,amqp://a:b@127.0.0.1:5673,amqp://a:b@127.0.0.1:5674',
      expected: ['amqp://a:b@127.0.0.1:5672', 'amqp://a:b@127.0.0.1:5673', 'amqp://a:b@127.0.0.1:5674'],
    },
    { name: 'spaces around the entries are trimmed', text: '  amqp://h1:5672 ,  amqp://h2:5672  ', expected: ['amqp://h1:5672', 'amqp://h2:5672'] },
    { name: 'empty entries are dropped', text: 'amqp://h1:5672,,amqp://h2:5672,', expected: ['amqp://h1:5672', 'amqp://h2:5672'] },
    { name: 'amqps with a vhost', text: 'amqps://demo:s3cret@rabbit.example.org:5671/%2F', expected: ['amqps://demo:s3cret@rabbit.example.org:5671/%2F'] },
    {
      name: 'query parameters kept as written',
      text: 'amqp://h:5672/%2F?heartbeat=10&frameMax=8192',
      expected: ['amqp://h:5672/%2F?heartbeat=10&frameMax=8192'],
    },
    { name: 'scheme in capitals, returned as written', text: 'AMQP://h:5672', expected: ['AMQP://h:5672'] },
  ];

  it.each(cases)('$name', ({ text, expected }) => {
    expect(parseUrls(text)).toEqual(expected);
  });
});

describe('parseUrls: usage errors', () => {
  const cases: { name: string; text: string; message: RegExp }[] = [
    { name: 'empty', text: '', message: /^--urls: no URL given$/ },
    { name: 'only commas and spaces', text: ' , ,', message: /^--urls: no URL given$/ },
    { name: 'not a URL', text: 'not a url', message: /^--urls: the URL is not a URL \(example: amqp:\/\/demo:demo@127\.0\.0\.1:5672\)$/ },
    { name: 'host:port without a scheme', text: '127.0.0.1:5672', message: /is not a URL|is not an amqp:\/\/ or amqps:\/\/ URL/ },
    { name: 'http:// is not AMQP', text: 'http://127.0.0.1:15672', message: /^--urls: the URL is not an amqp:\/\/ or amqps:\/\/ URL$/ },
    { name: 'https:// is not AMQP', text: 'https://rabbit.example.org', message: /is not an amqp:\/\/ or amqps:\/\/ URL/ },
    { name: 'one bad entry in a good list is named', text: 'amqp://h1:5672,ftp://h2:21', message: /^--urls: entry 2 is not an amqp:\/\/ or amqps:\/\/ URL$/ },
  ];

  it.each(cases)('$name', ({ text, message }) => {
    const err = thrown(() => parseUrls(text));
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).exitCode).toBe(ExitCode.usage);
    expect((err as UsageError).message).toMatch(message);
  });
});

describe('parseUrls: a wrongly written URL is rejected without quoting its password', () => {
  // `entry`: how the message names the bad entry (it never quotes it: a malformed URL's
  // password cannot be located to be masked).
  const cases: { name: string; text: string; masked?: string }[] = [
    { name: "missing ':' after the scheme", text: 'amqp//u:secret@h' },
    { name: 'one slash after the scheme (no host: amqplib would connect to localhost)', text: 'amqp:/u:secret@h' },
    { name: 'no slash after the scheme (no host)', text: 'amqp:u:secret@h' },
    { name: 'no host after the credentials', text: 'amqp://u:secret@', masked: 'the URL' },
    { name: 'port out of range', text: 'amqp://u:secret@h:99999', masked: 'the URL' },
    { name: 'management URL instead of AMQP', text: 'http://u:secret@h:15672', masked: 'the URL' },
    { name: 'bad second entry after a good one', text: 'amqp://u:secret@h:5672,amqp//u:secret@h', masked: 'entry 2' },
  ];

  it.each(cases)('$name: $text', ({ text, masked }) => {
    const err = thrown(() => parseUrls(text));
    expect(err).toBeInstanceOf(UsageError);
    const message = (err as UsageError).message;
    expect(message).not.toContain('secret');
    if (masked !== undefined) expect(message).toContain(masked);
  });
});

describe('withHeartbeat', () => {
  const cases: { name: string; url: string; heartbeatS: number; expected: string }[] = [
    { name: 'adds ?heartbeat=N', url: 'amqp://demo:demo@127.0.0.1:5672', heartbeatS: 5, expected: 'amqp://demo:demo@127.0.0.1:5672?heartbeat=5' },
    { name: 'after a vhost path', url: 'amqp://demo:demo@127.0.0.1:5672/%2F', heartbeatS: 10, expected: 'amqp://demo:demo@127.0.0.1:5672/%2F?heartbeat=10' },
    { name: 'amqps', url: 'amqps://u:p@rabbit.example.org:5671/bench', heartbeatS: 30, expected: 'amqps://u:p@rabbit.example.org:5671/bench?heartbeat=30' },
    { name: '0 (heartbeats off) is passed on', url: 'amqp://h:5672', heartbeatS: 0, expected: 'amqp://h:5672?heartbeat=0' },
    { name: 'keeps an existing heartbeat', url: 'amqp://h:5672?heartbeat=30', heartbeatS: 5, expected: 'amqp://h:5672?heartbeat=30' },
    { name: 'keeps an existing heartbeat=0', url: 'amqp://h:5672/%2F?heartbeat=0', heartbeatS: 5, expected: 'amqp://h:5672/%2F?heartbeat=0' },
    {
      name: 'keeps other parameters and appends',
      url: 'amqp://h:5672/%2F?frameMax=8192&channelMax=10',
      heartbeatS: 5,
      expected: 'amqp://h:5672/%2F?frameMax=8192&channelMax=10&heartbeat=5',
    },
    { name: 'keeps a percent-encoded password', url: 'amqp://demo:p%40ss@h:5672', heartbeatS: 5, expected: 'amqp://demo:p%40ss@h:5672?heartbeat=5' },
  ];

  it.each(cases)('$name', ({ url, heartbeatS, expected }) => {
    expect(withHeartbeat(url, heartbeatS)).toBe(expected);
  });
});

describe('backoffMs', () => {
  const cases: [round: number, expected: number][] = [
    [0, 100],
    [1, 200],
    [2, 400],
    [3, 800],
    [4, 1_600],
    [5, 2_000],
    [6, 2_000],
    [30, 2_000],
    [5_000, 2_000],
    [-1, 100],
  ];

  it.each(cases)('round %i → %i ms', (round, expected) => {
    expect(backoffMs(round)).toBe(expected);
  });

  it('never decreases from one round to the next', () => {
    for (let round = 0; round < 40; round++) expect(backoffMs(round + 1)).toBeGreaterThanOrEqual(backoffMs(round));
  });
});
