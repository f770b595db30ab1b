import { describe, expect, it } from 'vitest';
import { maskUrl, maskUrlsIn } from '../../src/url.js';

describe('maskUrl', () => {
  const cases: { name: string; url: string; expected: string }[] = [
    { name: 'amqp with password', url: 'amqp://demo:demo@127.0.0.1:5672', expected: 'amqp://demo:***@127.0.0.1:5672' },
    { name: 'amqp keeps a trailing slash', url: 'amqp://demo:demo@127.0.0.1:5672/', expected: 'amqp://demo:***@127.0.0.1:5672/' },
    { name: 'amqps with vhost path', url: 'amqps://demo:s3cret@rabbit.example.org:5671/%2F', expected: 'amqps://demo:***@rabbit.example.org:5671/%2F' },
    {
      name: 'percent-encoded password',
      url: 'amqp://demo:p%40ss%2Fw%3Ard@127.0.0.1:5673',
      expected: 'amqp://demo:***@127.0.0.1:5673',
    },
    { name: 'unencoded @ in the password is masked whole', url: 'amqp://demo:p@ss@127.0.0.1:5672', expected: 'amqp://demo:***@127.0.0.1:5672' },
    { name: 'http with password, no path: no slash added', url: 'http://guest:guest@localhost:15672', expected: 'http://guest:***@localhost:15672' },
    { name: 'http with password and path', url: 'http://guest:guest@localhost:15672/api/overview', expected: 'http://guest:***@localhost:15672/api/overview' },
    { name: 'http without password is unchanged', url: 'http://localhost:15672/', expected: 'http://localhost:15672/' },
    { name: 'user without password is unchanged', url: 'amqp://demo@127.0.0.1:5672', expected: 'amqp://demo@127.0.0.1:5672' },
    { name: 'no credentials', url: 'amqp://127.0.0.1:5672', expected: 'amqp://127.0.0.1:5672' },
    { name: 'unparsable without credentials is left alone', url: 'not a url', expected: 'not a url' },
    { name: 'unparsable with user:pass@ is still masked', url: 'amqp://demo:pw@[broken', expected: 'amqp://demo:***@[broken' },
    { name: 'empty string', url: '', expected: '' },
  ];

  it.each(cases)('$name', ({ url, expected }) => {
    expect(maskUrl(url)).toBe(expected);
  });

  // Its comment promises to keep the original form; only the password should change.
  it.each([
    { name: 'scheme casing', url: 'AMQP://demo:demo@rabbit1:5672', expected: 'AMQP://demo:***@rabbit1:5672' },
    { name: 'an explicit default port', url: 'https://demo:demo@rabbit.example.org:443/', expected: 'https://demo:***@rabbit.example.org:443/' },
  ])('changes nothing but the password: $name', ({ url, expected }) => {
    expect(maskUrl(url)).toBe(expected);
  });
});

describe('maskUrlsIn', () => {
  const cases: { name: string; text: string; expected: string }[] = [
    {
      name: 'one URL in an error message',
      text: 'connect ECONNREFUSED amqp://demo:demo@127.0.0.1:5672 after 3 tries',
      expected: 'connect ECONNREFUSED amqp://demo:***@127.0.0.1:5672 after 3 tries',
    },
    {
      name: 'several URLs, comma-separated and in prose',
      text: 'no node answered: amqp://demo:demo@127.0.0.1:5672,amqps://demo:x%2Fy@127.0.0.1:5673 and http://guest:guest@127.0.0.1:15672/api/nodes',
      expected: 'no node answered: amqp://demo:***@127.0.0.1:5672,amqps://demo:***@127.0.0.1:5673 and http://guest:***@127.0.0.1:15672/api/nodes',
    },
    {
      name: 'URLs without passwords are unchanged',
      text: 'GET http://127.0.0.1:15672/api/queues/%2F/demo.orders failed; amqp://demo@127.0.0.1:5672 refused',
      expected: 'GET http://127.0.0.1:15672/api/queues/%2F/demo.orders failed; amqp://demo@127.0.0.1:5672 refused',
    },
    {
      name: 'no URL at all',
      text: 'node rabbit2 not healthy after 60000 ms (last state: starting)',
      expected: 'node rabbit2 not healthy after 60000 ms (last state: starting)',
    },
    { name: 'upper-case scheme', text: 'AMQP://demo:demo@h:5672', expected: 'AMQP://demo:***@h:5672' },
    { name: 'an e-mail address is not a URL', text: 'contact ops@example.org', expected: 'contact ops@example.org' },
  ];

  it.each(cases)('$name', ({ text, expected }) => {
    expect(maskUrlsIn(text)).toBe(expected);
  });

  // Error messages go through maskUrlsIn (src/cli/main.ts): it must not leak what maskUrl hides.
  it.each([
    'amqp://demo:demo@127.0.0.1:5672',
    'amqps://demo:p%40ss@rabbit.example.org:5671/%2F',
    'amqp://demo:p@ss@127.0.0.1:5672',
    'amqp://:secret@127.0.0.1:5672',
  ])('masks a lone URL as maskUrl does: %s', (url) => {
    expect(maskUrlsIn(url)).toBe(maskUrl(url));
  });
});
