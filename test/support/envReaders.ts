/**
 * The readers of an env file, each run as it is: a POSIX shell sourcing it (`set -a; . ./app.env`
 * in sh, bash and dash, then the exported variables read by a child process), the `dotenv` npm
 * package, python-dotenv (python3's, as installed), and docker compose's reader. No docker engine
 * or compose plugin runs here, so compose's reader is compose-go's dotenv grammar (its
 * `dotenv/parser.go`: statements, quoted values ending at the first quote not preceded by a
 * backslash, the quote characters trimmed from both ends, escapes and variables expanded in double
 * quotes only, unquoted values up to `#`) written out below, with its CRLF-to-LF reading.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import dotenv from 'dotenv';

export type EnvValues = Record<string, string>;

/** A file the readers must never create: values hold commands that would make it. */
export const CANARY = 'PWNED';

export const SHELLS = ['sh', 'bash', 'dash'] as const;

/** Each reader's values for the given names, read from `dir/app.env` (written from `text`). */
export function readWithAll(dir: string, text: string, names: readonly string[]): Record<string, EnvValues> {
  const file = join(dir, 'app.env');
  writeFileSync(file, text);
  const read: Record<string, EnvValues> = {
    dotenv: dotenv.parse(text),
    'python-dotenv': readWithPython(file),
    'compose-go': readWithCompose(text),
  };
  for (const shell of SHELLS) read[shell] = readWithShell(shell, dir, names);
  if (existsSync(join(dir, CANARY)))
    throw new Error(`reading the env file ran a command: ${CANARY} was made in ${dir}`);
  return read;
}

/** The python that has python-dotenv: the one on PATH, else Debian's (python3-dotenv, as CI installs it). */
let python: string | undefined;
function pythonWithDotenv(): string {
  python ??= ['python3', '/usr/bin/python3'].find(
    (candidate) => spawnSync(candidate, ['-c', 'import dotenv']).status === 0,
  );
  if (python === undefined)
    throw new Error('no python3 here has python-dotenv (pip install python-dotenv, or apt-get install python3-dotenv)');
  return python;
}

function readWithPython(file: string): EnvValues {
  const script = 'import json,sys\nfrom dotenv import dotenv_values\nprint(json.dumps(dotenv_values(sys.argv[1])))';
  const run = spawnSync(pythonWithDotenv(), ['-c', script, file], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`python-dotenv failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as EnvValues;
}

function readWithShell(shell: string, dir: string, names: readonly string[]): EnvValues {
  // The environment the sourced file exported, NUL-separated (a value may hold line feeds, never a NUL).
  const run = spawnSync(shell, ['-c', 'set -a; . ./app.env; set +a; exec env -0'], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: process.env.PATH },
  });
  if (run.status !== 0) throw new Error(`${shell} failed to source the file: ${run.stderr}`);
  const wanted = new Set(names);
  const values: EnvValues = {};
  for (const entry of run.stdout.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0 && wanted.has(entry.slice(0, eq))) values[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return values;
}

// compose-go's dotenv grammar.

const isSpace = (c: string) => '\t\v\f\r \u0085\u00a0'.includes(c);
const isUnicodeSpace = (c: string) => /\s/u.test(c) || c === '\u0085';

function expandEscapes(text: string): string {
  const out = text.replace(/\\./gsu, (match) => (match[1] === 'n' ? '\n' : match[1] === 'r' ? '\r' : match));
  return out.replace(/\\([^$])/gsu, '$1');
}

/** compose's interpolation: `$$` is a `$`, `${NAME}` and `$NAME` the earlier value (or empty). */
function expandVariables(text: string, values: EnvValues): string {
  return text.replace(/\$\$|\$\{([^}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (match, braced?: string, bare?: string) => {
    if (match === '$$') return '$';
    return values[(braced ?? bare)!] ?? '';
  });
}

export function readWithCompose(source: string): EnvValues {
  const values: EnvValues = {};
  let src = source.replace(/\r\n/g, '\n');
  for (;;) {
    // getStatementStart: skip white space and comment lines.
    let pos = [...src].findIndex((c) => !isUnicodeSpace(c));
    while (pos !== -1 && [...src][pos] === '#') {
      const rest = [...src].slice(pos).join('');
      const eol = rest.indexOf('\n');
      if (eol === -1) return values;
      src = rest.slice(eol);
      pos = [...src].findIndex((c) => !isUnicodeSpace(c));
    }
    if (pos === -1) return values;
    src = [...src].slice(pos).join('');
    // locateKeyName.
    if (src.startsWith('export')) src = src.slice('export'.length);
    while (src.length && isSpace(src[0])) src = src.slice(1);
    let key = '';
    let offset = -1;
    let inherited = false;
    for (let i = 0; i < src.length; i++) {
      const c = src[i];
      if (isSpace(c)) continue;
      if (c === '=' || c === ':' || c === '\n') {
        key = src.slice(0, i);
        offset = i + 1;
        inherited = c === '\n';
        break;
      }
      if (c === '_' || c === '.' || /[\p{L}\p{N}]/u.test(c)) continue;
      throw new Error(`unexpected character ${JSON.stringify(c)} in variable name`);
    }
    if (offset === -1) throw new Error('zero length string');
    key = key.replace(/\s+$/u, '');
    if (key.includes(' ')) throw new Error('key cannot contain a space');
    src = src.slice(offset);
    while (src.length && isSpace(src[0])) src = src.slice(1);
    if (inherited) continue;
    // extractVarValue.
    const quote = src[0];
    if (quote !== "'" && quote !== '"') {
      const end = src.indexOf('\n');
      const line = end < 0 ? src : src.slice(0, end);
      values[key] = expandVariables(line.split('#')[0].replace(/\s+$/u, ''), values);
      if (end < 0) return values;
      src = src.slice(end);
      continue;
    }
    let closed = -1;
    for (let i = 1; i < src.length; i++) {
      if (src[i] !== quote || src[i - 1] === '\\') continue;
      closed = i;
      break;
    }
    if (closed === -1) throw new Error(`unterminated quoted value ${src.split('\n')[0]}`);
    let value = src.slice(0, closed);
    while (value.startsWith(quote)) value = value.slice(1);
    while (value.endsWith(quote)) value = value.slice(0, -1);
    values[key] = quote === '"' ? expandVariables(expandEscapes(value), values) : value;
    src = src.slice(closed + 1);
  }
}
