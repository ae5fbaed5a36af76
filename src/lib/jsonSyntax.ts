/**
 * Where a text stops being JSON, to tell a client the line and column of its mistake.
 * V8's JSON.parse names the position for most mistakes, but for an unexpected character its
 * message quotes the text instead (which could hold a secret) and gives no position: this scanner
 * finds it. It is run only after JSON.parse failed; one pass, no recursion (containers on a stack).
 */

export interface JsonSyntaxProblem {
  /** Offset in the text (UTF-16 code units) where the mistake is. */
  readonly offset: number;
  readonly problem: string;
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
const HEX4 = /^[0-9a-fA-F]{4}$/;
const LITERALS = ['true', 'false', 'null'];

/** The first mistake of a text that is not JSON; undefined when it is JSON. */
export function jsonSyntaxProblem(text: string): JsonSyntaxProblem | undefined {
  const stack: string[] = [];
  const n = text.length;
  let i = 0;
  const fail = (problem: string): JsonSyntaxProblem => ({ offset: i, problem });

  const string = (): JsonSyntaxProblem | undefined => {
    i++; // the opening quote
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return undefined;
      }
      if (c === 0x5c) {
        const escaped = text[i + 1];
        if (escaped === 'u') {
          if (!HEX4.test(text.slice(i + 2, i + 6))) return fail('a \\u escape needs 4 hex digits');
          i += 6;
        } else if (escaped !== undefined && '"\\/bfnrt'.includes(escaped)) {
          i += 2;
        } else {
          return fail('an unknown escape in a string');
        }
        continue;
      }
      if (c < 0x20) return fail('a control character in a string (write it escaped)');
      i++;
    }
    return fail('a string is not closed');
  };

  const number = (): JsonSyntaxProblem | undefined => {
    if (text[i] === '-') i++;
    if (text[i] === '0') i++;
    else if (isDigit(text[i])) while (isDigit(text[i])) i++;
    else return fail('a digit was expected');
    if (text[i] === '.') {
      i++;
      if (!isDigit(text[i])) return fail('a digit was expected after the decimal point');
      while (isDigit(text[i])) i++;
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      if (!isDigit(text[i])) return fail('a digit was expected in the exponent');
      while (isDigit(text[i])) i++;
    }
    return undefined;
  };

  let expect: 'value' | 'valueOrClose' | 'key' | 'keyOrClose' | 'colon' | 'after' = 'value';
  for (;;) {
    while (i < n && isSpace(text[i])) i++;
    if (i >= n) return expect === 'after' && stack.length === 0 ? undefined : fail('the text ends too early');
    const c = text[i];
    if (expect === 'value' || expect === 'valueOrClose') {
      if (expect === 'valueOrClose' && c === ']') {
        stack.pop();
        i++;
        expect = 'after';
      } else if (c === '{' || c === '[') {
        stack.push(c);
        i++;
        expect = c === '{' ? 'keyOrClose' : 'valueOrClose';
      } else if (c === '"') {
        const problem = string();
        if (problem) return problem;
        expect = 'after';
      } else if (c === '-' || isDigit(c)) {
        const problem = number();
        if (problem) return problem;
        expect = 'after';
      } else {
        const literal = LITERALS.find((word) => text.startsWith(word, i));
        if (!literal)
          return fail(
            'unexpected character: a value was expected (a string in double quotes, a number, true, false, null, an object or an array)',
          );
        i += literal.length;
        expect = 'after';
      }
    } else if (expect === 'key' || expect === 'keyOrClose') {
      if (expect === 'keyOrClose' && c === '}') {
        stack.pop();
        i++;
        expect = 'after';
      } else {
        if (c !== '"') return fail('a property name in double quotes was expected');
        const problem = string();
        if (problem) return problem;
        expect = 'colon';
      }
    } else if (expect === 'colon') {
      if (c !== ':') return fail("':' was expected after a property name");
      i++;
      expect = 'value';
    } else {
      const top = stack[stack.length - 1];
      if (top === undefined) return fail('unexpected text after the JSON value');
      if (c === ',') {
        i++;
        expect = top === '{' ? 'key' : 'value';
      } else if (c === (top === '{' ? '}' : ']')) {
        stack.pop();
        i++;
      } else {
        return fail(
          top === '{' ? "',' or '}' was expected after a property" : "',' or ']' was expected after an array element",
        );
      }
    }
  }
}

/** Line and column (both from 1) of an offset, for people reading the message. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) {
    line++;
    lineStart = at + 1;
  }
  return { line, column: offset - lineStart + 1 };
}
