import { describe, expect, it } from 'vitest';
import { locateJsonError, type JsonFault } from '../../src/util/json-locate.js';

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe('locateJsonError: valid JSON → undefined', () => {
  it.each([
    ['empty object', '{}'],
    ['empty array', '[]'],
    ['nested, every kind of value', '{"a": [1, -2.5e+3, 0, "x\\n\\u00e9\\"", true, false, null], "b": {"c": {}}}'],
    ['a number with whitespace around', '  42 \n'],
    ['a string', '"s"'],
    ['CRLF line ends', '{\r\n  "a": 1\r\n}\r\n'],
  ])('%s', (_name, text) => {
    expect(parses(text)).toBe(true);
    expect(locateJsonError(text)).toBeUndefined();
  });
});

describe('locateJsonError: where it first goes wrong', () => {
  const cases: { name: string; text: string; expected: JsonFault }[] = [
    {
      name: 'trailing comma in an object',
      text: '{\n  "a": 1,\n}',
      expected: { offset: 12, line: 3, column: 1, reason: 'unexpected "}", expected a property name in double quotes' },
    },
    {
      name: 'trailing comma in an object, CRLF',
      text: '{\r\n  "a": 1,\r\n}',
      expected: { offset: 14, line: 3, column: 1, reason: 'unexpected "}", expected a property name in double quotes' },
    },
    { name: 'trailing comma in an array', text: '[1, 2,]', expected: { offset: 6, line: 1, column: 7, reason: 'unexpected "]", expected a value' } },
    { name: 'missing colon', text: '{"a" 1}', expected: { offset: 5, line: 1, column: 6, reason: `unexpected "1", expected ':'` } },
    {
      name: 'missing colon on the third line',
      text: '{\n  "name": "x",\n  "vhost" "/"\n}',
      expected: { offset: 27, line: 3, column: 11, reason: `unexpected "\\"", expected ':'` },
    },
    { name: 'missing comma', text: '{"a": 1 "b": 2}', expected: { offset: 8, line: 1, column: 9, reason: `unexpected "\\"", expected ',' or '}'` } },
    { name: 'unterminated string', text: '{"a": "abc', expected: { offset: 10, line: 1, column: 11, reason: 'unterminated string' } },
    { name: 'line break inside a string', text: '{"a": "ab\ncd"}', expected: { offset: 9, line: 1, column: 10, reason: 'line break inside a string' } },
    { name: 'bad escape', text: '["\\x"]', expected: { offset: 2, line: 1, column: 3, reason: 'bad escape' } },
    { name: 'bad \\u escape', text: '["\\u12G4"]', expected: { offset: 2, line: 1, column: 3, reason: 'bad \\u escape' } },
    { name: "bad literal 'tru'", text: '[tru]', expected: { offset: 1, line: 1, column: 2, reason: 'unexpected "t", expected a value' } },
    { name: "bad literal 'tru' as a value", text: '{"ok": tru}', expected: { offset: 7, line: 1, column: 8, reason: 'unexpected "t", expected a value' } },
    {
      name: 'single quotes',
      text: "{'a': 1}",
      expected: { offset: 1, line: 1, column: 2, reason: `unexpected "'", expected a property name in double quotes` },
    },
    {
      name: 'garbage after the document',
      text: '{"a":1} x',
      expected: { offset: 8, line: 1, column: 9, reason: 'unexpected "x" after the end of the document' },
    },
    { name: 'a second closing brace', text: '{"a":1}}', expected: { offset: 7, line: 1, column: 8, reason: 'unexpected "}" after the end of the document' } },
    { name: 'two documents', text: '{}\n{}', expected: { offset: 3, line: 2, column: 1, reason: 'unexpected "{" after the end of the document' } },
    { name: 'truncated array', text: '{"a": [1, 2', expected: { offset: 11, line: 1, column: 12, reason: `unexpected end of input, expected ',' or ']'` } },
    { name: 'empty input', text: '', expected: { offset: 0, line: 1, column: 1, reason: 'unexpected end of input, expected a value' } },
    { name: 'whitespace only', text: '\n\n  ', expected: { offset: 4, line: 3, column: 3, reason: 'unexpected end of input, expected a value' } },
    { name: 'a lone minus', text: '[-]', expected: { offset: 1, line: 1, column: 2, reason: 'unexpected "-", expected a value' } },
    { name: 'leading zero', text: '[01]', expected: { offset: 2, line: 1, column: 3, reason: `unexpected "1", expected ',' or ']'` } },
  ];

  it.each(cases)('$name', ({ text, expected }) => {
    expect(parses(text)).toBe(false);
    expect(locateJsonError(text)).toEqual(expected);
  });
});

// It runs after JSON.parse failed, to say where: it must agree with JSON.parse on what is valid.
describe('locateJsonError agrees with JSON.parse', () => {
  it.each([
    { name: 'a raw tab inside a string', text: '{"a": "x\ty"}' },
    { name: 'a raw control character inside a string', text: '["\u0001"]' },
    { name: 'a number longer than 400 digits', text: `[${'1'.repeat(500)}]` },
    { name: 'an escaped solidus and unicode', text: '"\\/\\uD83D\\uDE00"' },
  ])('$name', ({ text }) => {
    expect(locateJsonError(text) === undefined).toBe(parses(text));
  });

  it('deeply nested garbage gets a location, not a stack overflow', () => {
    const text = '['.repeat(100_000);
    expect(parses(text)).toBe(false);
    let fault: JsonFault | undefined;
    expect(() => {
      fault = locateJsonError(text);
    }).not.toThrow();
    // Where the scanner stood when the stack ran out: somewhere inside the brackets.
    expect(fault?.reason).toBe('nested too deeply');
    expect(fault?.line).toBe(1);
    expect(fault?.offset).toBeGreaterThan(0);
    expect(fault?.offset).toBeLessThanOrEqual(100_000);
  });
});
