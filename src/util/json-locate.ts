/**
 * Where a JSON text first goes wrong, for a one-line error that names line and column (Node
 * 20's JSON.parse messages often carry no position and quote raw text). A small validating
 * scanner: it only runs after JSON.parse has already failed. Pure.
 */
export interface JsonFault {
  offset: number;
  line: number;
  column: number;
  reason: string;
}

class Fault extends Error {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

const NUMBER = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;

export function locateJsonError(text: string): JsonFault | undefined {
  let i = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const describe = (): string => (i >= text.length ? 'unexpected end of input' : `unexpected ${JSON.stringify(text[i])}`);
  const expect = (ch: string): void => {
    if (text[i] !== ch) throw new Fault(i, `${describe()}, expected '${ch}'`);
    i++;
  };
  const string = (): void => {
    expect('"');
    for (;;) {
      if (i >= text.length) throw new Fault(i, 'unterminated string');
      const c = text[i]!;
      if (c === '"') {
        i++;
        return;
      }
      if (c < ' ') throw new Fault(i, c === '\n' ? 'line break inside a string' : 'control character inside a string');
      if (c === '\\') {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) throw new Fault(i, 'bad \\u escape');
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else throw new Fault(i, 'bad escape');
      } else i++;
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') throw new Fault(i, `${describe()}, expected a property name in double quotes`);
        string();
        ws();
        expect(':');
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        throw new Fault(i, `${describe()}, expected ',' or '}'`);
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        throw new Fault(i, `${describe()}, expected ',' or ']'`);
      }
    }
    if (c === '"') {
      string();
      return;
    }
    NUMBER.lastIndex = i;
    const num = NUMBER.exec(text);
    if (num) {
      i += num[0].length;
      return;
    }
    for (const lit of ['true', 'false', 'null']) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return;
      }
    }
    throw new Fault(i, `${describe()}, expected a value`);
  };
  try {
    value();
    ws();
    if (i < text.length) throw new Fault(i, `${describe()} after the end of the document`);
    return undefined;
  } catch (caught) {
    // A document nested deeper than the stack: report where the scanner stood.
    const err = caught instanceof RangeError ? new Fault(i, 'nested too deeply') : caught;
    if (!(err instanceof Fault)) throw err;
    const before = text.slice(0, err.offset);
    const line = before.split('\n').length;
    const column = err.offset - before.lastIndexOf('\n');
    return { offset: err.offset, line, column, reason: err.reason };
  }
}
