/**
 * Which rendering of a pull a request asks for: the `format` query parameter
 * (json, yaml, properties, env) wins; else the `Accept` header's most preferred type among the
 * ones served; else JSON. `*` types never choose a text rendering, so the ConfigHub Java client
 * (`Accept: text/html, image/gif, image/jpeg, *; q=.2`) and curl keep getting JSON.
 */
import type { IncomingMessage } from 'node:http';
import { PULL_FORMATS, type PullFormat } from '../../domain/renderings.js';
import { badRequest } from './errors.js';
import { header } from './headers.js';

const ACCEPTED: Record<string, PullFormat> = {
  'application/json': 'json',
  'text/x-java-properties': 'properties',
  'application/x-yaml': 'yaml',
  'application/yaml': 'yaml',
  'text/yaml': 'yaml',
  'text/x-yaml': 'yaml',
  'text/plain': 'env',
};

/** Longest Accept header looked at, and most media ranges in it: bounded work for any input. */
const MAX_ACCEPT = 2048;
const MAX_RANGES = 32;

/** A query parameter of the request's URL, or undefined (empty counts as absent). */
export function queryParameter(req: IncomingMessage, name: string): string | undefined {
  const url = req.url ?? '';
  const start = url.indexOf('?');
  if (start === -1) return undefined;
  const value = new URLSearchParams(url.slice(start + 1)).get(name)?.trim();
  return value ? value : undefined;
}

export function pullFormat(req: IncomingMessage): PullFormat {
  const asked = queryParameter(req, 'format');
  if (asked !== undefined) {
    const format = PULL_FORMATS.find((f) => f === asked.toLowerCase());
    if (!format) throw badRequest(`format must be one of ${PULL_FORMATS.join(', ')}`);
    return format;
  }
  const accept = header(req, 'Accept');
  if (accept === undefined || accept.length > MAX_ACCEPT) return 'json';
  let best: { format: PullFormat; q: number } | undefined;
  for (const range of accept.split(',').slice(0, MAX_RANGES)) {
    const [type, ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const format = ACCEPTED[type];
    if (!format) continue;
    const qText = parameters.find((p) => p.startsWith('q='))?.slice(2);
    const q = qText === undefined ? 1 : Number(qText);
    if (Number.isFinite(q) && q > 0 && (!best || q > best.q)) best = { format, q };
  }
  return best?.format ?? 'json';
}
