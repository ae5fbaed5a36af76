/**
 * What a repository looks like in git:
 *
 *   repository.yaml                            settings: context levels, description, flags, created
 *   keys/<xx>/<key>.yaml                       one file per key: metadata and values sorted by context;
 *                                              xx = first two hex digits of sha1(lower-cased key name)
 *   files/<context>/<path>                     active files, raw content, one folder per context
 *   inactive-files/<context>/<path>            files whose `active` flag is false
 *   security-groups.yaml                       security groups: name, key id, scrypt salt and
 *                                              parameters, data key wrapped under the password
 *
 * A secured key's document names its group (`securityGroup:`) and holds its values sealed; a
 * secured file's blob is a small YAML envelope (ENCRYPTED_FILE_MARK first) around its sealed content.
 *
 * `<key>` is the lower-cased key name; `<context>` is the context with `;` between items and `_`
 * for a wildcard (`Production;_`). Characters Windows forbids in names (`* : < > | ? "`), a
 * trailing dot or space, `%`, and Windows device names (`con`, `nul`, `com1`...) are written as
 * `%XX`, so a clone checks out on Linux, macOS and Windows.
 */
import YAML from 'yaml';
import { z } from 'zod';
import { WILDCARD, type Context } from '../domain/context.js';
import type { FileRecord, KeyRecord, RepoSettings, SecurityGroup } from '../domain/model.js';
import { keyId } from '../domain/names.js';
import { ENCRYPTED_FILE_MARK } from '../domain/securityGroups.js';
import { isValueType, VALUE_TYPES, type ValueType } from '../domain/valueTypes.js';
import { lineField as field, readYamlString, yamlFlowString, yamlNullableString, yamlString } from './yamlScalars.js';
import { LayoutError } from './errors.js';
import { ownString } from '../lib/ownCopies.js';
import { sha1Hex } from '../git/sha1.js';
import { storedContext } from './storedContexts.js';
import { parseCanonicalSettings } from './canonicalSettings.js';

export const SETTINGS_FILE = 'repository.yaml';
export const SECURITY_GROUPS_FILE = 'security-groups.yaml';
export const KEYS_FOLDER = 'keys';
export const FILES_FOLDER = 'files';
export const INACTIVE_FILES_FOLDER = 'inactive-files';
export const BRANCH_REF = 'refs/heads/main';

/** The folder a file variant lives in, by its active flag. */
export function filesFolder(file: Pick<FileRecord, 'active'>): string {
  return file.active ? FILES_FOLDER : INACTIVE_FILES_FOLDER;
}

// --- names in trees -------------------------------------------------------------------------

/** Windows device names, also with trailing spaces before an extension (`con .txt`), as Git for Windows refuses them. */
const DEVICE_NAMES = /^(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3]|conin\$|conout\$) *$/i;
const WINDOWS_FORBIDDEN = /[<>:"|?*%]/g;

function percent(char: string): string {
  return `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
}

/** A name that checks out on every operating system. Reversible by decodeName. */
export function encodeName(name: string): string {
  let encoded = name.replace(WINDOWS_FORBIDDEN, percent);
  if (/[. ]$/.test(encoded)) encoded = encoded.slice(0, -1) + percent(encoded.slice(-1));
  const stem = encoded.split('.')[0];
  if (DEVICE_NAMES.test(stem)) encoded = percent(encoded[0]) + encoded.slice(1);
  return encoded;
}

export function decodeName(encoded: string): string {
  return encoded.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** The shard folder of a key: spreads keys over 256 folders so a push rewrites few trees. */
export function keyShard(id: string): string {
  return sha1Hex(id).slice(0, 2);
}

export function keyFileName(id: string): string {
  return `${encodeName(id)}.yaml`;
}

/** `keys/<xx>/<key>.yaml` for a key name. */
export function keyPath(name: string): string {
  const id = keyId(name);
  return `${KEYS_FOLDER}/${keyShard(id)}/${keyFileName(id)}`;
}

export function contextFolderName(context: Context): string {
  return encodeName(context.map((item) => (item === WILDCARD ? '_' : item)).join(';'));
}

export function parseContextFolderName(name: string): Context {
  return decodeName(name)
    .split(';')
    .map((item) => (item === '_' ? WILDCARD : item));
}

export function encodeFilePath(path: string): string[] {
  return path.split('/').map(encodeName);
}

export function decodeFilePath(segments: readonly string[]): string {
  return segments.map(decodeName).join('/');
}

// --- documents --------------------------------------------------------------------------------

/**
 * The documents cfghub writes with the yaml library (settings, security groups, rule sets, context
 * groups). Text spanning lines is written double-quoted, not as a block: yaml 2.9.1 writes a text
 * of blanks followed by line breaks as a block without its indentation indicator, and reads it back
 * without the blanks (a description `"  \n"` came back as `"\n"`; found by the round-trip property
 * test of security-groups.yaml).
 */
export const stringify = (doc: unknown): string =>
  YAML.stringify(doc, { lineWidth: 0, minContentWidth: 0, blockQuote: false });

const keyDocument = z.strictObject({
  key: z.string(),
  readme: z.string(),
  deprecated: z.boolean(),
  vdt: z.enum(VALUE_TYPES),
  push: z.boolean(),
  securityGroup: z.string().optional(),
  values: z.array(
    z.strictObject({
      context: z.string(),
      value: z.string().nullable(),
      active: z.boolean(),
    }),
  ),
});

/** A key document, always in the same form: the same key gives the same bytes. */
export function serializeKey(key: KeyRecord): string {
  const lines = [
    `key: ${yamlString(key.key)}`,
    `readme: ${yamlString(key.readme)}`,
    `deprecated: ${key.deprecated}`,
    `vdt: ${key.vdt}`,
    `push: ${key.push}`,
  ];
  if (key.securityGroup !== undefined) lines.push(`securityGroup: ${yamlString(key.securityGroup)}`);
  if (key.values.length === 0) lines.push('values: []');
  else lines.push('values:');
  for (const v of key.values) {
    lines.push(
      `  - context: ${yamlString(v.context.join(';'))}`,
      `    value: ${yamlNullableString(v.value)}`,
      `    active: ${v.active}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export function parseYaml<T>(text: string, schema: z.ZodType<T>, what: string): T {
  let doc: unknown;
  try {
    doc = YAML.parse(text, { schema: 'core', strict: true, uniqueKeys: true });
  } catch (error) {
    throw new LayoutError(`${what} is not valid YAML: ${(error as Error).message.split('\n')[0].replace(/:$/, '')}`);
  }
  const parsed = schema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LayoutError(`${what} does not match the layout: ${issue.path.join('.') || 'document'}: ${issue.message}`);
  }
  return parsed.data;
}

/** Module functions, not closures made per document: a history page parses hundreds. */
function flag(text: string | undefined): boolean | undefined {
  return text === 'true' ? true : text === 'false' ? false : undefined;
}

/** A key document's fields as read, each value's context still its text (`a;b;c`). */
type ReadKey = z.infer<typeof keyDocument>;

/**
 * A key record as snapshots keep it, whichever reader read it: its strings copied out of the
 * document's text (ownCopies.ts), its values' contexts shared (storedContexts.ts).
 */
function keptKey(read: ReadKey): KeyRecord {
  const { securityGroup, ...doc } = read;
  return {
    ...doc,
    key: ownString(doc.key),
    readme: ownString(doc.readme),
    ...(securityGroup !== undefined ? { securityGroup: ownString(securityGroup) } : {}),
    values: doc.values.map((v) => ({
      context: storedContext(v.context),
      value: v.value === null ? null : ownString(v.value),
      active: v.active,
    })),
  };
}

/**
 * Reads a key document exactly as serializeKey writes it, line by line, about 50 times faster than
 * the yaml library; undefined for anything else (a document edited by hand, say).
 */
export function parseCanonicalKey(text: string): KeyRecord | undefined {
  const lines = text.split('\n');
  if (lines.pop() !== '' || lines.length < 6) return undefined;
  const key = readYamlString(field(lines[0], 'key'));
  const readme = readYamlString(field(lines[1], 'readme'));
  const deprecated = flag(field(lines[2], 'deprecated'));
  const vdt = field(lines[3], 'vdt');
  const push = flag(field(lines[4], 'push'));
  if (
    key === undefined ||
    readme === undefined ||
    deprecated === undefined ||
    push === undefined ||
    !isValueType(vdt ?? '')
  )
    return undefined;
  let at = 5;
  let securityGroup: string | undefined;
  if (lines[at].startsWith('securityGroup: ')) {
    securityGroup = readYamlString(field(lines[at++], 'securityGroup'));
    if (securityGroup === undefined) return undefined;
  }
  const values: ReadKey['values'] = [];
  if (lines[at] === 'values: []') {
    if (lines.length !== at + 1) return undefined;
  } else if (lines[at] === 'values:' && lines.length > at + 1 && (lines.length - at - 1) % 3 === 0) {
    for (let i = at + 1; i < lines.length; i += 3) {
      const context = readYamlString(field(lines[i], '  - context'));
      const rawValue = field(lines[i + 1], '    value');
      const value = rawValue === 'null' ? null : readYamlString(rawValue);
      const active = flag(field(lines[i + 2], '    active'));
      if (context === undefined || value === undefined || active === undefined) return undefined;
      values.push({ context, value, active });
    }
  } else {
    return undefined;
  }
  return keptKey({
    key,
    readme,
    deprecated,
    vdt: vdt as ValueType,
    push,
    ...(securityGroup !== undefined ? { securityGroup } : {}),
    values,
  });
}

export function parseKey(text: string, what: string): KeyRecord {
  const canonical = parseCanonicalKey(text);
  if (canonical) return canonical;
  return keptKey(parseYaml(text, keyDocument, what));
}

// --- secured files ------------------------------------------------------------------------------

const encryptedFileDocument = z.strictObject({
  'cfghub-encrypted-file': z.literal('v1'),
  securityGroup: z.string(),
  references: z.array(z.string()),
  content: z.string(),
});

/** The blob of a file: its content, or for a secured file the envelope around its sealed content. */
export function serializeFileContent(file: FileRecord): string {
  if (file.securityGroup === undefined) return file.content;
  return [
    ENCRYPTED_FILE_MARK,
    `securityGroup: ${yamlString(file.securityGroup)}`,
    `references: [${(file.references ?? []).map(yamlFlowString).join(', ')}]`,
    `content: ${yamlString(file.content)}`,
    '',
  ].join('\n');
}

/** The parts of a file record its blob holds. */
export function parseFileContent(
  text: string,
  what: string,
): Pick<FileRecord, 'content' | 'securityGroup' | 'references'> {
  if (!text.startsWith(`${ENCRYPTED_FILE_MARK}\n`)) return { content: text };
  const doc = parseYaml(text, encryptedFileDocument, what);
  return { content: doc.content, securityGroup: doc.securityGroup, references: doc.references };
}

// --- security groups ----------------------------------------------------------------------------

const securityGroupsDocument = z.strictObject({
  groups: z.array(
    z.strictObject({
      name: z.string(),
      keyId: z.string().regex(/^[0-9a-f]{16}$/),
      kdf: z.strictObject({
        name: z.literal('scrypt'),
        salt: z.string(),
        N: z.number().int(),
        r: z.number().int(),
        p: z.number().int(),
      }),
      wrappedKey: z.string(),
    }),
  ),
});

export function serializeSecurityGroups(groups: readonly SecurityGroup[]): string {
  const sorted = [...groups].sort((a, b) => (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : 1));
  return `# Security groups. Each group's data key is stored only wrapped (AES-256-GCM) under a key derived\n# from the group's password by scrypt; see the README.\n${stringify({ groups: sorted })}`;
}

export function parseSecurityGroups(text: string): SecurityGroup[] {
  return parseYaml(text, securityGroupsDocument, SECURITY_GROUPS_FILE).groups;
}

const settingsDocument = z.strictObject({
  context: z.array(z.string()).min(1).max(10),
  description: z.string(),
  created: z.string(),
  isPrivate: z.boolean(),
  isPersonal: z.boolean(),
  accessControlsEnabled: z.boolean(),
  vdtEnabled: z.boolean(),
  securityEnabled: z.boolean(),
  contextGroupsEnabled: z.boolean(),
  tokenFreePush: z.boolean(),
  tokenFreePull: z.boolean(),
  requiredApprovals: z.array(z.strictObject({ context: z.string(), approvals: z.number().int().min(1) })).optional(),
  // Any text reads (a plain-git commit cannot be refused); one that breaks the alias rule names no repository.
  alias: z.string().optional(),
});

export function serializeSettings(settings: RepoSettings): string {
  const { levels, ...rest } = settings;
  return stringify({
    context: levels,
    description: rest.description,
    created: rest.created,
    isPrivate: rest.isPrivate,
    isPersonal: rest.isPersonal,
    accessControlsEnabled: rest.accessControlsEnabled,
    vdtEnabled: rest.vdtEnabled,
    securityEnabled: rest.securityEnabled,
    contextGroupsEnabled: rest.contextGroupsEnabled,
    tokenFreePush: rest.tokenFreePush,
    tokenFreePull: rest.tokenFreePull,
    // Written only when set: a repository without rules keeps the exact document it always had.
    ...(rest.requiredApprovals?.length
      ? {
          requiredApprovals: rest.requiredApprovals.map((rule) => ({
            context: rule.context,
            approvals: rule.approvals,
          })),
        }
      : {}),
    ...(rest.alias !== undefined ? { alias: rest.alias } : {}),
  });
}

export function parseSettings(text: string, what = SETTINGS_FILE): RepoSettings {
  const canonical = parseCanonicalSettings(text);
  if (canonical) return canonical;
  const { context, requiredApprovals, alias, ...rest } = parseYaml(text, settingsDocument, what);
  return {
    levels: context,
    ...rest,
    ...(requiredApprovals?.length ? { requiredApprovals } : {}),
    ...(alias !== undefined ? { alias } : {}),
  };
}
