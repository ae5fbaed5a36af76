/**
 * `repository.yaml` read without the yaml library when it is exactly as serializeSettings writes
 * it (the key documents have the same shortcut, parseCanonicalKey). Why: a history
 * request's access check reads the settings of the head, and on a new server that one document
 * was the yaml library's and zod's first use, several milliseconds of a cold first page spent
 * compiling their code. Anything not in the written form (edited by hand, any other YAML) returns
 * undefined, and the caller reads it with the yaml library, which knows all of YAML.
 */
import type { RepoSettings } from '../domain/model.js';
import { lineField as field, readYamlString } from './yamlScalars.js';

/** The flags, in the order serializeSettings writes them, after `context`, `description` and `created`. */
export const SETTINGS_FLAGS = [
  'isPrivate',
  'isPersonal',
  'accessControlsEnabled',
  'vdtEnabled',
  'securityEnabled',
  'contextGroupsEnabled',
  'tokenFreePush',
  'tokenFreePull',
] as const;
/** As settingsDocument in layout.ts: one to ten context levels. */
const MAX_LEVELS = 10;
/** `created` as written: ISO 8601 UTC to the second, a plain scalar the YAML core schema reads as a string. */
const CREATED = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,3})?Z$/;
const ITEM = '  - ';

export function parseCanonicalSettings(text: string): RepoSettings | undefined {
  const lines = text.split('\n');
  if (lines.pop() !== '' || lines[0] !== 'context:') return undefined;
  const levels: string[] = [];
  let at = 1;
  for (; at < lines.length && lines[at].startsWith(ITEM); at++) {
    const level = readYamlString(lines[at].slice(ITEM.length));
    if (level === undefined) return undefined;
    levels.push(level);
  }
  if (levels.length < 1 || levels.length > MAX_LEVELS || lines.length !== at + 2 + SETTINGS_FLAGS.length)
    return undefined;
  const description = readYamlString(field(lines[at], 'description'));
  const createdText = field(lines[at + 1], 'created');
  const created = createdText !== undefined && CREATED.test(createdText) ? createdText : readYamlString(createdText);
  if (description === undefined || created === undefined) return undefined;
  const flags: Partial<Record<(typeof SETTINGS_FLAGS)[number], boolean>> = {};
  for (let i = 0; i < SETTINGS_FLAGS.length; i++) {
    const value = field(lines[at + 2 + i], SETTINGS_FLAGS[i]);
    if (value !== 'true' && value !== 'false') return undefined;
    flags[SETTINGS_FLAGS[i]] = value === 'true';
  }
  const f = flags as Record<(typeof SETTINGS_FLAGS)[number], boolean>;
  return {
    levels,
    description,
    created,
    isPrivate: f.isPrivate,
    isPersonal: f.isPersonal,
    accessControlsEnabled: f.accessControlsEnabled,
    vdtEnabled: f.vdtEnabled,
    securityEnabled: f.securityEnabled,
    contextGroupsEnabled: f.contextGroupsEnabled,
    tokenFreePush: f.tokenFreePush,
    tokenFreePull: f.tokenFreePull,
  };
}
