/**
 * Plain-text renderings of a pull's properties, for tools that do not speak
 * JSON: Java properties, YAML, and dotenv. Pure: each takes the resolved properties, by name in
 * the pull's order, and returns the text.
 *
 * Values are the pull's `val`: text, or for List and Map keys the parsed JSON (written as JSON
 * text in properties and dotenv, as YAML sequences and mappings in YAML). A key the caller could
 * not open (sealed in a security group) is left out and named in a comment on the first line, so
 * a tool never reads ciphertext as if it were the value.
 */
import { stringify } from 'yaml';

export type PullFormat = 'json' | 'yaml' | 'properties' | 'env';
export const PULL_FORMATS: readonly PullFormat[] = ['json', 'yaml', 'properties', 'env'];

export interface RenderedProperty {
  readonly name: string;
  /** The pull's `val`; undefined when the value is sealed for this caller. */
  readonly value: unknown;
}

/** A value as one line of text: text as it is, null as empty, List and Map as JSON. */
function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function sealedComment(properties: readonly RenderedProperty[]): string {
  const sealed = properties.filter((p) => p.value === undefined).map((p) => p.name);
  return sealed.length ? `# left out, sealed (their security group's password is needed): ${sealed.join(', ')}\n` : '';
}

/**
 * Escapes text as `java.util.Properties.store` does, so `Properties.load` (which reads
 * ISO-8859-1) gets it back: backslash escapes for `\ \t \n \r \f = : # !`, `\uXXXX` for every
 * character outside printable ASCII, and spaces escaped in keys and at the start of values.
 */
function escapeProperties(text: string, isKey: boolean): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const code = text.charCodeAt(i);
    switch (c) {
      case '\\':
        out += '\\\\';
        break;
      case '\t':
        out += '\\t';
        break;
      case '\n':
        out += '\\n';
        break;
      case '\r':
        out += '\\r';
        break;
      case '\f':
        out += '\\f';
        break;
      case '=':
      case ':':
      case '#':
      case '!':
        out += `\\${c}`;
        break;
      case ' ':
        out += isKey || i === 0 ? '\\ ' : ' ';
        break;
      default:
        out += code < 0x20 || code > 0x7e ? `\\u${code.toString(16).padStart(4, '0')}` : c;
    }
  }
  return out;
}

export function toProperties(properties: readonly RenderedProperty[]): string {
  let out = sealedComment(properties);
  for (const p of properties) {
    if (p.value !== undefined) out += `${escapeProperties(p.name, true)}=${escapeProperties(asText(p.value), false)}\n`;
  }
  return out;
}

/**
 * Names the env rendering carries: the names a POSIX shell can assign. Any other (`db.url`,
 * `a-b`) would be read by `set -a; . ./app.env` as a command to run, so it is left out and named.
 */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * One env value, written so that the four readers of such a file read it back exactly and none
 * runs anything: a POSIX shell sourcing it (`set -a; . ./app.env`), the `dotenv` npm package,
 * python-dotenv and docker compose (compose-go's dotenv parser). Undefined when no writing is
 * read the same by all four: such a value is left out and named.
 *
 * - Single quotes, when the text holds no `'`: nothing inside is interpreted by the shell,
 *   `dotenv`, or compose; python-dotenv turns `\\` into one backslash there, and compose takes a
 *   `\` before the closing quote as an escaped quote, so a text holding two backslashes in a row
 *   or ending with one is refused.
 * - Double quotes, when the text holds a `'` and none of `"`, `$`, `` ` `` or `\`: the only
 *   characters any of the four interprets inside double quotes.
 * - A carriage return is refused: each reader but the shell reads it as a line feed (it turns
 *   CR and CRLF into LF before parsing), and an escape (`\r`) means a CR to three readers and a
 *   backslash to the shell. NUL cannot be in an environment variable.
 * - A `${NAME}` (or `${NAME:-default}`) is refused: python-dotenv replaces it in every value,
 *   quoted or not, and has no escape for it.
 * Line feeds and tabs stay literal inside the quotes, which all four read as they are.
 */
/** What python-dotenv expands in a value, quoted or not (its `_posix_variable`). */
const PYTHON_DOTENV_VARIABLE = /\$\{[^}:]*(?::-[^}]*)?\}/;

export function quoteEnvValue(text: string): string | undefined {
  if (/[\0\r]/.test(text) || PYTHON_DOTENV_VARIABLE.test(text)) return undefined;
  if (!text.includes("'")) return text.includes('\\\\') || text.endsWith('\\') ? undefined : `'${text}'`;
  return /["$`\\]/.test(text) ? undefined : `"${text}"`;
}

export function toDotenv(properties: readonly RenderedProperty[]): string {
  let out = sealedComment(properties);
  const shown = properties.filter((p) => p.value !== undefined);
  const unnamed = shown.filter((p) => !ENV_NAME.test(p.name)).map((p) => p.name);
  if (unnamed.length) out += `# left out, not environment variable names: ${unnamed.join(', ')}\n`;
  const lines: string[] = [];
  const unsafe: string[] = [];
  for (const p of shown) {
    if (!ENV_NAME.test(p.name)) continue;
    const quoted = quoteEnvValue(asText(p.value));
    if (quoted === undefined) unsafe.push(p.name);
    else lines.push(`${p.name}=${quoted}\n`);
  }
  if (unsafe.length)
    out += `# left out, values a shell and the dotenv readers cannot all read back as they are: ${unsafe.join(', ')}\n`;
  return out + lines.join('');
}

export function toYaml(properties: readonly RenderedProperty[]): string {
  const map: Record<string, unknown> = {};
  for (const p of properties) if (p.value !== undefined) map[p.name] = p.value ?? null;
  const body = properties.some((p) => p.value !== undefined) ? stringify(map, { lineWidth: 0 }) : '{}\n';
  return sealedComment(properties) + body;
}

export const RENDERERS: Record<Exclude<PullFormat, 'json'>, (properties: readonly RenderedProperty[]) => string> = {
  properties: toProperties,
  env: toDotenv,
  yaml: toYaml,
};

export const MEDIA_TYPES: Record<PullFormat, string> = {
  json: 'application/json',
  properties: 'text/x-java-properties',
  yaml: 'application/x-yaml',
  env: 'text/plain',
};
