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

/** A recursive-descent validator over `text`: each method reads one piece of JSON at `i` or throws a Fault there. */
class Scanner {
  /** Where the scanner stands. */
  i = 0;

  constructor(private readonly text: string) {}

  /** One value and nothing after it but whitespace. */
  document(): void {
    this.value();
    this.ws();
    if (this.i < this.text.length) throw new Fault(this.i, `${this.describe()} after the end of the document`);
  }

  private ws(): void {
    while (this.i < this.text.length && ' \t\n\r'.includes(this.text[this.i]!)) this.i++;
  }

  /** The character at i, for a message: "unexpected \"}\"", or the end of the input. */
  private describe(): string {
    return this.i >= this.text.length ? 'unexpected end of input' : `unexpected ${JSON.stringify(this.text[this.i])}`;
  }

  private expect(ch: string): void {
    if (this.text[this.i] !== ch) throw new Fault(this.i, `${this.describe()}, expected '${ch}'`);
    this.i++;
  }

  /** Consume `ch` when it is next. */
  private skip(ch: string): boolean {
    if (this.text[this.i] !== ch) return false;
    this.i++;
    return true;
  }

  private value(): void {
    this.ws();
    const c = this.text[this.i];
    if (c === '{') this.object();
    else if (c === '[') this.array();
    else if (c === '"') this.string();
    else if (!this.numberOrLiteral()) throw new Fault(this.i, `${this.describe()}, expected a value`);
  }

  private object(): void {
    this.i++;
    this.ws();
    if (this.skip('}')) return;
    for (;;) {
      this.ws();
      if (this.text[this.i] !== '"') throw new Fault(this.i, `${this.describe()}, expected a property name in double quotes`);
      this.string();
      this.ws();
      this.expect(':');
      this.value();
      this.ws();
      if (this.skip(',')) continue;
      if (this.skip('}')) return;
      throw new Fault(this.i, `${this.describe()}, expected ',' or '}'`);
    }
  }

  private array(): void {
    this.i++;
    this.ws();
    if (this.skip(']')) return;
    for (;;) {
      this.value();
      this.ws();
      if (this.skip(',')) continue;
      if (this.skip(']')) return;
      throw new Fault(this.i, `${this.describe()}, expected ',' or ']'`);
    }
  }

  private string(): void {
    const { text } = this;
    this.expect('"');
    for (;;) {
      if (this.i >= text.length) throw new Fault(this.i, 'unterminated string');
      const c = text[this.i]!;
      if (c === '"') {
        this.i++;
        return;
      }
      if (c < ' ') throw new Fault(this.i, c === '\n' ? 'line break inside a string' : 'control character inside a string');
      if (c === '\\') this.escape();
      else this.i++;
    }
  }

  /** A backslash escape inside a string: \uXXXX or one of "\/bfnrt. */
  private escape(): void {
    const e = this.text[this.i + 1];
    if (e === 'u') {
      if (!/^[0-9a-fA-F]{4}$/.test(this.text.slice(this.i + 2, this.i + 6))) throw new Fault(this.i, 'bad \\u escape');
      this.i += 6;
    } else if (e !== undefined && '"\\/bfnrt'.includes(e)) this.i += 2;
    else throw new Fault(this.i, 'bad escape');
  }

  /** A number, true, false or null at i: consumed, and true; false when none is there. */
  private numberOrLiteral(): boolean {
    NUMBER.lastIndex = this.i;
    const num = NUMBER.exec(this.text);
    if (num) {
      this.i += num[0].length;
      return true;
    }
    for (const lit of ['true', 'false', 'null']) {
      if (this.text.startsWith(lit, this.i)) {
        this.i += lit.length;
        return true;
      }
    }
    return false;
  }
}

/** Where a fault is in the text: its offset, 1-based line and column, and why. */
function faultAt(text: string, fault: Fault): JsonFault {
  const before = text.slice(0, fault.offset);
  const line = before.split('\n').length;
  const column = fault.offset - before.lastIndexOf('\n');
  return { offset: fault.offset, line, column, reason: fault.reason };
}

export function locateJsonError(text: string): JsonFault | undefined {
  const scanner = new Scanner(text);
  try {
    scanner.document();
    return undefined;
  } catch (caught) {
    // A document nested deeper than the stack: report where the scanner stood.
    const err = caught instanceof RangeError ? new Fault(scanner.i, 'nested too deeply') : caught;
    if (!(err instanceof Fault)) throw err;
    return faultAt(text, err);
  }
}
