/**
 * The read operations of ConfigHub's client API, as bodies built from one snapshot: pull, raw
 * file, key data, repository info and export, each typed by its wire schema (src/api/answers.ts).
 * Pure of I/O: the caller picks the snapshot (head, tag or date) and turns the result into an
 * answer.
 */
import type {
  ExportAnswer,
  ExportedFile,
  ExportedKey,
  InfoAnswer,
  KeyFields,
  ListedFile,
  PullAnswerBody,
  PulledFile,
  PulledProperty,
} from '../../api/answers.js';
import { contentTypeOf } from '../../domain/contentType.js';
import { runSteps, type Steps } from '../../lib/steps.js';
import { sortSteps } from '../../lib/sortSteps.js';
import { formatContext, WILDCARD, type Context } from '../../domain/context.js';
import { compileGlob } from '../../domain/glob.js';
import type { FileRecord, KeyRecord } from '../../domain/model.js';
import { keyId } from '../../domain/names.js';
import { ENCRYPTED_FILE, Renderer, type RenderedFile } from '../../domain/render.js';
import { answerTooLarge, MAX_RENDERED_ANSWER_CHARS } from '../../domain/renderLimits.js';
import type { ContextGroup } from '../../domain/contextGroups.js';
import { requestContext, resolveFile, resolveValue, type RequestContext } from '../../domain/resolve.js';
import type { GitRepository } from '../../disk/repository.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { ServiceError } from '../errors.js';
import { KeyRing } from '../security/keyRing.js';
import { openFile, openValue } from '../security/unsealing.js';
import { CIPHER } from '../security/sealing.js';
import { GlobTooLongError, ReferenceCycleError } from '../../domain/errors.js';

export interface PullOptions {
  readonly includeComments: boolean;
  readonly includeValueContext: boolean;
  readonly noProperties: boolean;
  readonly noFiles: boolean;
}

export interface ReadTarget {
  readonly repository: GitRepository;
  readonly account: string;
  readonly name: string;
  readonly snapshot: Snapshot;
  /** ISO date of the commit read, when the caller asked for the past (Tag, Repository-Date). */
  readonly repoDate?: string;
  /** The security groups the caller unlocked: their keys and files are read opened, others sealed. */
  readonly ring?: KeyRing;
}

/**
 * How a sealed value or file is marked for a reader without its group's password: `encryption`
 * is the group's name, as ConfigHub's APIPull and FileHelper write it (`group.getName()`) and the
 * Java client's getEncryptionGroup returns it.
 */
function sealedMark(group: string | undefined): { encryption: string; cipher: string } {
  // Only a record in a group is ever sealed, so `group` is always set here.
  return { encryption: group ?? '', cipher: CIPHER };
}

const byName = (a: string, b: string) =>
  a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0;

function filesByPath(snapshot: Snapshot): Map<string, FileRecord[]> {
  const paths = new Map<string, FileRecord[]>();
  for (const file of snapshot.files()) paths.set(file.path, [...(paths.get(file.path) ?? []), file]);
  return paths;
}

/**
 * Renders every file that resolves for a context, by path, opening what the ring unlocks: a
 * `${ key }` of a key sealed in another group renders as ENCRYPTED_VALUE, never as its value.
 */
export class ContextView {
  private readonly paths: Map<string, FileRecord[]>;

  constructor(
    private readonly snapshot: Snapshot,
    private readonly request: RequestContext,
    private readonly ring: KeyRing,
  ) {
    this.paths = filesByPath(snapshot);
  }

  /** The file variant that resolves for the context, sealed if it is secured. */
  file(path: string): FileRecord | undefined {
    return resolveFile(this.paths.get(path) ?? [], this.request);
  }

  /** The file opened, or undefined when it is sealed in a group the ring lacks. */
  open(file: FileRecord): FileRecord | undefined {
    return openFile(file, this.ring);
  }

  /** One renderer per view, so each path is rendered once however many files embed it. */
  private readonly renderer = new Renderer({
    key: (id) => this.snapshot.key(id),
    value: (key) => {
      const value = resolveValue(key, this.request);
      if (!value) return undefined;
      const opened = openValue(key, value, this.ring);
      return opened ? { ...value, value: opened.text } : 'locked';
    },
    file: (path) => {
      const file = this.file(path);
      return file && (this.open(file) ?? { ...file, content: ENCRYPTED_FILE, references: [] });
    },
  });

  render(file: FileRecord): RenderedFile {
    try {
      return this.renderer.render(file);
    } catch (error) {
      if (error instanceof ReferenceCycleError) throw new ServiceError('invalid_argument', error.message);
      throw error;
    }
  }

  /**
   * Each path's file rendered, or, when it is sealed in a group the ring lacks, the sealed file;
   * together within MAX_RENDERED_ANSWER_CHARS (else a RenderLimitError naming the file that
   * passed it), so no answer is built beyond it.
   */
  *renderedFiles(): Steps<[string, RenderedFile | { sealed: FileRecord }][]> {
    const out: [string, RenderedFile | { sealed: FileRecord }][] = [];
    let total = 0;
    for (const path of [...this.paths.keys()].sort()) {
      const file = this.file(path);
      if (!file) continue;
      const opened = this.open(file);
      const rendered = opened ? this.render(opened) : { sealed: file };
      total += 'sealed' in rendered ? rendered.sealed.content.length : rendered.content.length;
      if (total > MAX_RENDERED_ANSWER_CHARS) throw answerTooLarge(path);
      out.push([path, rendered]);
      yield;
    }
    return out;
  }
}

/** A stored value as a client sees it: List and Map as JSON, everything else as text. */
export function typedValue(key: KeyRecord, text: string | null): unknown {
  if (text === null || (key.vdt !== 'List' && key.vdt !== 'Map')) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function pullBody(
  target: ReadTarget,
  contextText: string,
  context: Context,
  options: PullOptions,
): PullAnswerBody {
  return runSteps(pullBodySteps(target, contextText, context, options));
}

/** pullBody as steps (src/domain/steps.ts): a pause is safe after each file rendered and each key resolved. */
export function* pullBodySteps(
  target: ReadTarget,
  contextText: string,
  context: Context,
  options: PullOptions,
): Steps<PullAnswerBody> {
  const request = requestContext(context, target.snapshot.groups());
  const ring = target.ring ?? KeyRing.EMPTY;
  const view = new ContextView(target.snapshot, request, ring);
  let files: Record<string, PulledFile> | undefined;
  if (!options.noFiles) {
    // Null prototypes wherever a name is a property name: a key or file may be named __proto__.
    files = Object.create(null) as Record<string, PulledFile>;
    for (const [path, rendered] of yield* view.renderedFiles()) {
      if ('sealed' in rendered) {
        files[path] = {
          ...sealedMark(rendered.sealed.securityGroup),
          content: rendered.sealed.content,
          'content-type': contentTypeOf(path),
        };
        continue;
      }
      files[path] = {
        content: rendered.content,
        'content-type': contentTypeOf(path),
        ...(rendered.unresolved.length ? { unresolved: [...rendered.unresolved] } : {}),
        ...(rendered.encrypted.length ? { encrypted: [...rendered.encrypted] } : {}),
      };
    }
  }
  let properties: Record<string, PulledProperty> | undefined;
  if (!options.noProperties) {
    properties = Object.create(null) as Record<string, PulledProperty>;
    for (const key of yield* target.snapshot.keysByName()) {
      const value = resolveValue(key, request);
      if (!value) continue;
      const opened = openValue(key, value, ring);
      properties[key.key] = {
        ...(key.vdt !== 'Text' ? { type: key.vdt } : {}),
        ...(key.deprecated ? { deprecated: true } : {}),
        ...(options.includeComments && key.readme.trim() ? { comment: key.readme } : {}),
        ...(opened ? { val: typedValue(key, opened.text) } : { ...sealedMark(key.securityGroup), val: value.value }),
        ...(options.includeValueContext ? { context: [...value.context] } : {}),
      };
      yield;
    }
  }
  return {
    ...(files ? { files } : {}),
    ...(properties ? { properties } : {}),
    account: target.account,
    repo: target.name,
    context: contextText,
    ...(target.repoDate ? { repoDate: target.repoDate } : {}),
  };
}

export interface RawFile {
  readonly content: string;
  readonly contentType: string;
  readonly unresolved: readonly string[];
}

export function rawFile(target: ReadTarget, path: string, context: Context): RawFile {
  const normalized = path.startsWith('/') ? path.slice(1) : path;
  const view = new ContextView(
    target.snapshot,
    requestContext(context, target.snapshot.groups()),
    target.ring ?? KeyRing.EMPTY,
  );
  const file = view.file(normalized);
  if (!file)
    throw new ServiceError('not_found', `no file ${normalized} resolves for context ${formatContext(context)}`);
  const opened = view.open(file);
  if (!opened) {
    throw new ServiceError(
      'forbidden',
      `file ${normalized} is in security group ${file.securityGroup}: send its password in Security-Profile-Auth, or use a token bound to the group`,
    );
  }
  const rendered = view.render(opened);
  return { content: rendered.content, contentType: contentTypeOf(normalized), unresolved: rendered.unresolved };
}

export function keyDataBody(target: ReadTarget, name: string): KeyFields {
  const key = target.snapshot.key(keyId(name));
  if (!key) throw new ServiceError('not_found', `repository ${target.account}/${target.name} has no key ${name}`);
  return keyFields(key);
}

/** A key's own fields as keyData and export give them, in ConfigHub's order. */
function keyFields(key: KeyRecord): KeyFields {
  return {
    key: key.key,
    readme: key.readme,
    deprecated: key.deprecated,
    vdt: key.vdt,
    push: key.push,
    ...(key.securityGroup !== undefined ? { securityGroup: key.securityGroup } : {}),
  };
}

export interface InfoOptions {
  /** Levels whose item names to list: all when true, none when false, or these labels. */
  readonly contextElements: boolean | readonly string[];
  /** Files to list: all when true, none when false, or those matching a glob. */
  readonly files: boolean | string;
  readonly tags?: readonly { name: string; message: string; created: string }[];
}

/** Item names in use at each level, first spelling kept, sorted; as steps (a pause is safe after each key, file and 4,096 names sorted). */
function* contextElements(snapshot: Snapshot): Steps<Map<string, string[]>> {
  const levels = snapshot.settings.levels;
  const seen = levels.map(() => new Map<string, string>());
  const add = (context: Context) =>
    context.forEach((item, i) => {
      if (item !== WILDCARD && !seen[i].has(item.toLowerCase())) seen[i].set(item.toLowerCase(), item);
    });
  for (const key of snapshot.keys()) {
    for (const value of key.values) add(value.context);
    yield;
  }
  for (const file of snapshot.files()) {
    add(file.context);
    yield;
  }
  // Groups and their members are items of their level too, used by values or not.
  for (const group of activeGroups(snapshot)) {
    const i = levels.findIndex((level) => level.toLowerCase() === group.level.toLowerCase());
    if (i < 0) continue;
    for (const item of [group.name, ...group.members])
      if (!seen[i].has(item.toLowerCase())) seen[i].set(item.toLowerCase(), item);
  }
  const sorted = new Map<string, string[]>();
  for (const [i, level] of levels.entries()) {
    // By the lower-cased name, computed once per name (the map's keys), not at each comparison.
    const names = yield* sortSteps([...seen[i]], (a, b) => a[0] < b[0]);
    sorted.set(
      level,
      names.map((entry) => entry[1]),
    );
  }
  return sorted;
}

/** The context groups in force (none when the repository has them off). */
function activeGroups(snapshot: Snapshot): readonly ContextGroup[] {
  return snapshot.settings.contextGroupsEnabled ? snapshot.contextGroups : [];
}

/** `{level: {group: [members]}}` for the levels listed, as ConfigHub shows a group and its members; undefined when there are none. */
function groupsByLevel(
  snapshot: Snapshot,
  listed: readonly string[],
): Record<string, Record<string, string[]>> | undefined {
  const out: Record<string, Record<string, string[]>> = {};
  for (const group of activeGroups(snapshot)) {
    const level = listed.find((name) => name.toLowerCase() === group.level.toLowerCase());
    if (!level) continue;
    (out[level] ??= {})[group.name] = [...group.members].sort(byName);
  }
  return Object.keys(out).length ? out : undefined;
}

function globOf(pattern: string) {
  try {
    return compileGlob(pattern);
  } catch (error) {
    if (error instanceof GlobTooLongError) throw new ServiceError('invalid_argument', error.message);
    throw error;
  }
}

/** A repository's info, as steps (src/domain/steps.ts): its context elements walk every stored value. */
export function* infoBodySteps(target: ReadTarget, options: InfoOptions): Steps<InfoAnswer> {
  const { snapshot } = target;
  let listedElements: Record<string, string[]> | undefined;
  let contextGroups: InfoAnswer['contextGroups'];
  if (options.contextElements !== false) {
    const elements = yield* contextElements(snapshot);
    const wanted = options.contextElements === true ? [...elements.keys()] : options.contextElements;
    listedElements = Object.create(null) as Record<string, string[]>;
    for (const label of wanted) {
      const level = [...elements.keys()].find((name) => name.toLowerCase() === label.toLowerCase());
      if (!level)
        throw new ServiceError(
          'invalid_argument',
          `Context-Labels names ${label}, which is not a level of this repository (${snapshot.settings.levels.join(', ')})`,
        );
      listedElements[level] = elements.get(level)!;
    }
    contextGroups = groupsByLevel(snapshot, Object.keys(listedElements));
  }
  let files: ListedFile[] | undefined;
  if (options.files !== false) {
    const pattern = options.files === true ? undefined : globOf(options.files);
    const listed = [...snapshot.files()].filter((file) => !pattern || pattern.test(file.path));
    const byPathThenContext = (a: FileRecord, b: FileRecord) =>
      a.path < b.path || (a.path === b.path && byName(formatContext(a.context), formatContext(b.context)) < 0);
    files = (yield* sortSteps(listed, byPathThenContext)).map((file) => ({
      name: file.path.slice(file.path.lastIndexOf('/') + 1),
      path: file.path,
      context: formatContext(file.context),
      active: file.active,
      ...(file.securityGroup !== undefined ? { secureGroup: file.securityGroup } : {}),
    }));
  }
  return {
    account: target.account,
    repository: target.name,
    ...(target.repoDate ? { date: target.repoDate } : {}),
    context: [...snapshot.settings.levels],
    ...(listedElements ? { contextElements: listedElements } : {}),
    ...(contextGroups ? { contextGroups } : {}),
    ...(files ? { files } : {}),
    ...(options.tags
      ? {
          tags: options.tags.map((tag) => ({
            name: tag.name,
            readme: tag.message,
            ts: Date.parse(tag.created),
            date: tag.created,
          })),
        }
      : {}),
  };
}

export interface ExportOptions {
  readonly omitValues: boolean;
  readonly omitFiles: boolean;
}

/**
 * The repository in the push format: pushing it into a repository with the same levels (and
 * groups) recreates it. Secured keys and files carry `securityGroup`; their values and content are
 * plain for the groups the caller unlocked, else the sealed text (which a push refuses). As steps
 * (src/domain/steps.ts): a pause is safe after each key and each file.
 */
export function* exportBodySteps(target: ReadTarget, options: ExportOptions): Steps<ExportAnswer> {
  const ring = target.ring ?? KeyRing.EMPTY;
  const data: (ExportedKey | ExportedFile)[] = [];
  for (const key of yield* target.snapshot.keysByName()) {
    data.push({
      ...keyFields(key),
      ...(options.omitValues
        ? {}
        : {
            values: key.values.map((v) => ({
              context: formatContext(v.context),
              value: openValue(key, v, ring)?.text ?? v.value,
              active: v.active,
            })),
          }),
    });
    yield;
  }
  if (!options.omitFiles) {
    const files = [...target.snapshot.files()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    for (const file of files) {
      data.push({
        file: file.path,
        context: formatContext(file.context),
        content: (openFile(file, ring) ?? file).content,
        active: file.active,
        ...(file.securityGroup !== undefined ? { securityGroup: file.securityGroup } : {}),
      });
      yield;
    }
  }
  return { data };
}
