/**
 * Plain-text renderings of a pull's properties (issue 18, item 5), for tools that do not speak
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
      case '\\': out += '\\\\'; break;
      case '\t': out += '\\t'; break;
      case '\n': out += '\\n'; break;
      case '\r': out += '\\r'; break;
      case '\f': out += '\\f'; break;
      case '=': case ':': case '#': case '!': out += `\\${c}`; break;
      case ' ': out += isKey || i === 0 ? '\\ ' : ' '; break;
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

/** Key names the dotenv format can carry (the `dotenv` package reads `[\w.-]+`). */
const DOTENV_NAME = /^[\w.-]+$/;

/**
 * One dotenv value, quoted so that the `dotenv` package reads it back unchanged: single quotes
 * when the text holds none (nothing inside is interpreted), else backticks, else double quotes
 * (where that package turns `\n` into a new line, so it is the last choice). Line breaks stay
 * literal inside the quotes (multi-line values, dotenv 15 and later).
 */
function quoteDotenv(text: string): string {
  for (const quote of ["'", '`']) if (!text.includes(quote)) return `${quote}${text}${quote}`;
  return `"${text.replace(/"/g, '\\"')}"`;
}

export function toDotenv(properties: readonly RenderedProperty[]): string {
  let out = sealedComment(properties);
  const unnamed = properties.filter((p) => p.value !== undefined && !DOTENV_NAME.test(p.name)).map((p) => p.name);
  if (unnamed.length) out += `# left out, not dotenv names: ${unnamed.join(', ')}\n`;
  for (const p of properties) {
    if (p.value !== undefined && DOTENV_NAME.test(p.name)) out += `${p.name}=${quoteDotenv(asText(p.value))}\n`;
  }
  return out;
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
