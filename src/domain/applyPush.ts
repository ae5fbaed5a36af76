/**
 * The push transaction as pure logic: applies the elements of a push, in array order, to the
 * state the push starts from, and either returns every change or refuses the whole push with a
 * reason that names the element. No I/O: the store writes the result.
 */
import { contextId, formatContext, parseContext, type Context } from './context.js';
import { LONE_SURROGATE, normalizeFilePath, PathIndex } from './filePath.js';
import {
  fileId,
  type FileRecord,
  type KeyRecord,
  type PushChanges,
  type RepositoryState,
  type StoredValue,
  templateReferences,
} from './model.js';
import { isValidKeyName, keyId } from './names.js';
import { MAX_VALUES_PER_KEY, type FileElement, type KeyElement, type PushRequest } from './pushRequest.js';
import { deepestEmbedProblem } from './embedDepth.js';
import { shown } from './reasons.js';
import { runSteps, type Steps } from '../lib/steps.js';
import { MAX_EMBED_DEPTH } from './renderLimits.js';
import { ENCRYPTED_FILE_MARK, findGroup, SEALED_PREFIX } from './securityGroups.js';
import { describeType, fitsType, isFileReferenceType, isValueType, valueToText, VALUE_TYPES } from './valueTypes.js';

export interface PushOptions {
  /** The token may write keys whose `push` flag is false. */
  readonly forceKeyPush: boolean;
  /**
   * Whether element `index` holds the key of a security group (its `password` opens it, or the
   * token is bound to it). The state shows the keys and files of such groups opened; those of
   * other groups stay sealed, and an element may touch them only if it holds their group.
   */
  readonly unlocked?: (index: number, group: string) => boolean;
}

/**
 * What a refusal is about, as data beside its reason (the metrics count refusals by it; the reason
 * names keys and values a client sent, so it never becomes a label):
 * - `security`: a security group (unknown, off, its password missing or wrong, a sealed value);
 * - `missing`: a key or file that does not exist (key creation off, a reference to nothing);
 * - `push_disabled`: a key whose push flag is false;
 * - `value_type`: a value that does not fit its key's value data type, or an unknown type;
 * - `reference`: a deletion of a key or file that something still refers to;
 * - `context`: a context that is missing or malformed, a context group conflict, or a context the
 *   writer's access rules keep it from;
 * - `schema`: a change that breaks the repository's schemas (schemas.yaml);
 * - `invalid`: anything else malformed (names, paths, content, sizes).
 */
export const REFUSAL_KINDS = [
  'security',
  'missing',
  'push_disabled',
  'value_type',
  'reference',
  'context',
  'schema',
  'invalid',
] as const;
export type RefusalKind = (typeof REFUSAL_KINDS)[number];

export type PushOutcome = { ok: true; changes: PushChanges } | { ok: false; kind: RefusalKind; reason: string };

/** Thrown inside the transaction to refuse it; caught by applyPush. */
class Refusal extends Error {
  constructor(
    readonly kind: RefusalKind,
    reason: string,
  ) {
    super(reason);
  }
}

function refuse(kind: RefusalKind, reason: string): never {
  throw new Refusal(kind, reason);
}

export function applyPush(state: RepositoryState, request: PushRequest, options: PushOptions): PushOutcome {
  return runSteps(applyPushSteps(state, request, options));
}

/**
 * applyPush as steps (steps.ts): a pause is safe after each element and each key checked, so the
 * largest allowed push (50,000 values) is validated in slices on the server, not in one piece.
 */
export function* applyPushSteps(
  state: RepositoryState,
  request: PushRequest,
  options: PushOptions,
): Steps<PushOutcome> {
  const tx = new Transaction(state, request, options);
  try {
    return { ok: true, changes: yield* tx.run() };
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, kind: error.kind, reason: error.message };
    throw error;
  }
}

class Transaction {
  private readonly keys = new Map<string, KeyRecord | null>();
  private readonly files = new Map<string, FileRecord | null>();
  /** The element that last touched each key, for reasons about the key as a whole. */
  private readonly keyOrigin = new Map<string, string>();
  /** The value element that wrote each value (key id -> context id -> JSON path). */
  private readonly valueOrigin = new Map<string, Map<string, string>>();
  /** The element that last touched each file variant. */
  private readonly fileOrigin = new Map<string, string>();
  private readonly levels: number;
  private readonly enableKeyCreation: boolean;
  /** Groups of the secured file variants at the start, by path; built on the first new variant. */
  private securedPaths: Map<string, Set<string>> | undefined;
  /** Groups of the secured file variants this push writes, by path. */
  private readonly pushedSecuredPaths = new Map<string, Set<string>>();

  constructor(
    private readonly state: RepositoryState,
    private readonly request: PushRequest,
    private readonly options: PushOptions,
  ) {
    this.levels = state.settings.levels.length;
    // As in ConfigHub, a force-key-push token may create keys unless the push says otherwise.
    this.enableKeyCreation = request.enableKeyCreation ?? options.forceKeyPush;
  }

  *run(): Steps<PushChanges> {
    const { data } = this.request;
    for (let index = 0; index < data.length; index++) {
      const element = data[index];
      if (element.kind === 'key') this.applyKey(element, index);
      else this.applyFile(element, index);
      yield;
    }
    yield* this.checkValuesFitTypes();
    this.checkFilePaths();
    yield* this.checkFileReferences();
    yield;
    yield* this.checkTemplateReferences();
    this.checkEmbedDepth();
    return { keys: this.keys, files: this.files };
  }

  // --- keys ---------------------------------------------------------------------------------

  private currentKey(id: string): KeyRecord | undefined {
    return this.keys.has(id) ? (this.keys.get(id) ?? undefined) : this.state.key(id);
  }

  private applyKey(element: KeyElement, index: number): void {
    if (!isValidKeyName(element.key)) {
      refuse(
        'invalid',
        `data[${index}] key ${shown(element.key)}: key names are 1-120 letters, digits and . _ - + [ ] ( ) *`,
      );
    }
    const where = `data[${index}] key ${element.key}`;
    const id = keyId(element.key);
    const requested = this.requestedGroup(element.securityGroup, where);
    const committed = this.state.key(id);
    if (committed && !committed.push && !this.options.forceKeyPush) {
      refuse('push_disabled', `${where}: push is disabled for this key`);
    }
    const current = this.currentKey(id);
    const securityGroup = requested === undefined ? current?.securityGroup : requested || undefined;
    this.requireUnlocked(index, where, current?.securityGroup, element.opp === 'delete' ? undefined : securityGroup);
    if (element.opp === 'delete') {
      if (element.values !== undefined) refuse('invalid', `${where}: deleting a key takes no values`);
      if (current) this.keys.set(id, null);
      this.keyOrigin.set(id, `data[${index}]`);
      return;
    }
    const onlyDeletesValues =
      element.values !== undefined && element.values.length > 0 && element.values.every((v) => v.opp === 'delete');
    if (!current && onlyDeletesValues) return; // deleting values of a key that does not exist: nothing to do
    if (!current && !this.enableKeyCreation) {
      refuse('missing', `${where}: key does not exist and key creation is off (enableKeyCreation)`);
    }
    let vdt = current?.vdt ?? 'Text';
    if (element.vdt !== undefined) {
      if (!isValueType(element.vdt))
        refuse('value_type', `${where}: unknown vdt ${shown(element.vdt)} (one of ${VALUE_TYPES.join(', ')})`);
      if (!this.state.settings.vdtEnabled && element.vdt !== 'Text') {
        refuse('value_type', `${where}: value data types are off in this repository, so vdt must be Text`);
      }
      vdt = element.vdt;
    }
    const values = new Map<string, StoredValue>((current?.values ?? []).map((v) => [contextId(v.context), v]));
    element.values?.forEach((value, j) => {
      const at = `data[${index}].values[${j}] key ${element.key}`;
      if (value.context === undefined) refuse('context', `${at}: value has no context`);
      const context = this.parseContextOrRefuse(value.context, at);
      const cid = contextId(context);
      const existing = values.get(cid);
      if (value.opp === 'delete') {
        values.delete(cid);
        return;
      }
      let text = existing?.value ?? null;
      if (value.hasValue) {
        const converted = valueToText(value.value, vdt);
        if (!converted.ok) refuse('value_type', `${at}: ${converted.problem}`);
        if (securityGroup !== undefined && converted.text?.startsWith(SEALED_PREFIX)) {
          refuse(
            'security',
            `${at}: value is a sealed ciphertext (from an export made without the group's password); push the plain value`,
          );
        }
        text = converted.text;
      }
      values.set(cid, { context: existing?.context ?? context, value: text, active: value.active ?? true });
      this.originsOf(id).set(cid, `data[${index}].values[${j}]`);
    });
    this.keys.set(id, {
      key: current?.key ?? element.key,
      readme: element.readme ?? current?.readme ?? '',
      deprecated: element.deprecated ?? current?.deprecated ?? false,
      vdt,
      push: element.push ?? current?.push ?? true,
      ...(securityGroup !== undefined ? { securityGroup } : {}),
      values: [...values.values()],
    });
    this.keyOrigin.set(id, `data[${index}]`);
  }

  /**
   * The group an element asks for: undefined when it names none (the key or file keeps its
   * group), '' for "no group", else the group's stored spelling.
   */
  private requestedGroup(group: string | undefined, where: string): string | undefined {
    if (group === undefined || group === '') return group;
    if (!this.state.settings.securityEnabled)
      refuse('security', `${where}: security groups are off in this repository`);
    const found = findGroup(this.state.securityGroups, group);
    if (!found) refuse('security', `${where}: security group ${shown(group)} does not exist`);
    return found.name;
  }

  /** Touching a secured key or file, or moving one into a group, needs that group's key. */
  private requireUnlocked(index: number, where: string, ...groups: (string | undefined)[]): void {
    for (const group of groups) {
      if (group !== undefined && !this.options.unlocked?.(index, group)) {
        refuse('security', `${where}: the password for security group ${shown(group)} is missing or wrong`);
      }
    }
  }

  private originsOf(id: string): Map<string, string> {
    let origins = this.valueOrigin.get(id);
    if (!origins) this.valueOrigin.set(id, (origins = new Map()));
    return origins;
  }

  private parseContextOrRefuse(text: string, where: string): Context {
    const parsed = parseContext(text, this.levels);
    if (!parsed.ok) refuse('context', `${where}: ${parsed.problem}`);
    return parsed.context;
  }

  /** Where a value came from: the value element that wrote it, or the key element that retyped it. */
  private blameValue(id: string, key: KeyRecord, value: StoredValue): string {
    const origin = this.valueOrigin.get(id)?.get(contextId(value.context));
    if (origin) return `${origin} key ${key.key}`;
    return `${this.keyOrigin.get(id)} key ${key.key}: the value at context ${formatContext(value.context)}`;
  }

  private *checkValuesFitTypes(): Steps<void> {
    for (const [id, key] of this.keys) {
      if (!key) continue;
      yield;
      if (key.values.length > MAX_VALUES_PER_KEY) {
        refuse(
          'invalid',
          `${this.keyOrigin.get(id) ?? 'data'} key ${key.key}: would hold ${key.values.length} values, more than the ${MAX_VALUES_PER_KEY} a key may hold`,
        );
      }
      for (const value of key.values) {
        if (!fitsType(key.vdt, value.value)) {
          refuse('value_type', `${this.blameValue(id, key, value)}: value is not ${describeType(key.vdt)}`);
        }
      }
    }
  }

  // --- files --------------------------------------------------------------------------------

  private currentFile(id: string): FileRecord | undefined {
    return this.files.has(id) ? (this.files.get(id) ?? undefined) : this.state.file(id);
  }

  private applyFile(element: FileElement, index: number): void {
    const normalized = normalizeFilePath(element.file);
    if (!normalized.ok) refuse('invalid', `data[${index}] file ${shown(element.file)}: ${normalized.problem}`);
    const path = normalized.path;
    const where = `data[${index}] file ${shown(path)}`;
    const requested = this.requestedGroup(element.securityGroup, where);
    if (element.context === undefined) refuse('context', `${where}: file has no context`);
    const context = this.parseContextOrRefuse(element.context, where);
    const id = fileId(path, contextId(context));
    const current = this.currentFile(id);
    const securityGroup = requested === undefined ? current?.securityGroup : requested || undefined;
    this.requireUnlocked(index, where, current?.securityGroup, element.opp === 'delete' ? undefined : securityGroup);
    if (!current && element.opp !== 'delete') this.requireUnlocked(index, where, ...this.groupsOfPath(path));
    this.fileOrigin.set(id, `data[${index}]`);
    if (element.opp === 'delete') {
      if (current) this.files.set(id, null);
      return;
    }
    if (element.content !== undefined && LONE_SURROGATE.test(element.content))
      refuse('invalid', `${where}: content is not valid Unicode (a lone surrogate)`);
    const content = element.content ?? current?.content ?? '';
    if (securityGroup === undefined && content.startsWith(ENCRYPTED_FILE_MARK)) {
      refuse(
        'invalid',
        `${where}: content may not begin with ${ENCRYPTED_FILE_MARK}, which marks an encrypted file in git`,
      );
    }
    if (securityGroup !== undefined) {
      let groups = this.pushedSecuredPaths.get(path);
      if (!groups) this.pushedSecuredPaths.set(path, (groups = new Set()));
      groups.add(securityGroup);
    }
    this.files.set(id, {
      path,
      context: current?.context ?? this.contextSpelling(context),
      content,
      active: element.active ?? true,
      ...(securityGroup !== undefined ? { securityGroup } : {}),
    });
  }

  /**
   * The groups of the secured variants of a path (at any context): a new variant of a secured
   * file's path needs their keys, as a new value of a secured key does, or a pusher without the
   * key could shadow the secret file for the readers of a context.
   */
  private groupsOfPath(path: string): string[] {
    if (!this.securedPaths) {
      this.securedPaths = new Map();
      for (const file of this.state.files()) {
        if (file.securityGroup === undefined) continue;
        let groups = this.securedPaths.get(file.path);
        if (!groups) this.securedPaths.set(file.path, (groups = new Set()));
        groups.add(file.securityGroup);
      }
    }
    return [...(this.securedPaths.get(path) ?? []), ...(this.pushedSecuredPaths.get(path) ?? [])];
  }

  /**
   * The spelling a file context is stored with: that of another file with the same context, so
   * that one context never appears in two spellings (files of a context share a folder in git).
   */
  private contextSpelling(context: Context): Context {
    const cid = contextId(context);
    for (const file of this.finalFiles()) {
      if (contextId(file.context) === cid) return file.context;
    }
    return context;
  }

  /** Every file variant as it stands at this point of the transaction. */
  private *finalFiles(): Iterable<FileRecord> {
    for (const file of this.state.files()) {
      const id = fileId(file.path, contextId(file.context));
      if (!this.files.has(id)) yield file;
    }
    for (const file of this.files.values()) if (file) yield file;
  }

  private finalPaths(): Set<string> {
    const paths = new Set<string>();
    for (const file of this.finalFiles()) paths.add(file.path);
    return paths;
  }

  private checkFilePaths(): void {
    const added = [...this.files].filter(([id, file]) => file && !this.state.file(id));
    if (added.length === 0) return;
    const addedIds = new Set(added.map(([id]) => id));
    const index = new PathIndex();
    for (const file of this.finalFiles()) {
      if (!addedIds.has(fileId(file.path, contextId(file.context)))) index.add(file.path);
    }
    for (const [id, file] of added) {
      const problem = index.add(file!.path);
      if (problem) refuse('invalid', `${this.fileOrigin.get(id)} file ${shown(file!.path)}: ${problem}`);
    }
  }

  /** FileRef and FileEmbed values must name a file of the repository at the end of the push. */
  private *checkFileReferences(): Steps<void> {
    const paths = this.finalPaths();
    for (const [id, key] of this.keys) {
      if (!key || !isFileReferenceType(key.vdt)) continue;
      yield;
      for (const value of key.values) {
        if (value.value !== null && !paths.has(stripSlash(value.value))) {
          refuse('missing', `${this.blameValue(id, key, value)}: value names no file of the repository`);
        }
      }
    }
    const removed = new Set<string>();
    for (const [id, file] of this.files) {
      const before = this.state.file(id);
      if (!file && before && !paths.has(before.path)) removed.add(before.path);
    }
    if (removed.size === 0) return;
    for (const key of this.finalKeys()) {
      yield;
      if (!isFileReferenceType(key.vdt)) continue;
      for (const value of key.values) {
        const path = value.value === null ? null : stripSlash(value.value);
        if (path !== null && removed.has(path)) {
          const origin = [...this.files].find(([id, file]) => !file && this.state.file(id)?.path === path)![0];
          refuse(
            'reference',
            `${this.fileOrigin.get(origin)} file ${shown(path)}: cannot delete, key ${key.key} refers to it`,
          );
        }
      }
    }
  }

  private *finalKeys(): Iterable<KeyRecord> {
    for (const key of this.state.keys()) if (!this.keys.has(keyId(key.key))) yield key;
    for (const key of this.keys.values()) if (key) yield key;
  }

  /** Every `${ key }` in a file must name a key that exists at the end of the push. */
  private *checkTemplateReferences(): Steps<void> {
    for (const [id, file] of this.files) {
      if (!file) continue;
      yield;
      for (const name of templateReferences(file)) {
        if (!this.currentKey(keyId(name))) {
          refuse(
            'missing',
            `${this.fileOrigin.get(id)} file ${shown(file.path)}: template references key ${name}, which does not exist`,
          );
        }
      }
    }
    const deleted = [...this.keys].filter(([id, key]) => !key && this.state.key(id)).map(([id]) => id);
    if (deleted.length === 0) return;
    const deletedSet = new Set(deleted);
    for (const file of this.finalFiles()) {
      yield;
      for (const name of templateReferences(file)) {
        const id = keyId(name);
        if (deletedSet.has(id)) {
          refuse(
            'reference',
            `${this.keyOrigin.get(id)} key ${this.state.key(id)!.key}: cannot delete, file ${shown(file.path)} references it`,
          );
        }
      }
    }
  }

  /** Chains of embedded files within MAX_EMBED_DEPTH, checked when files or FileEmbed keys change. */
  private checkEmbedDepth(): void {
    const touchesEmbeds = this.files.size > 0 || [...this.keys.values()].some((key) => key?.vdt === 'FileEmbed');
    if (!touchesEmbeds) return;
    const problem = deepestEmbedProblem(this.finalFiles(), (id) => this.currentKey(id));
    if (!problem) return;
    const origin = [...this.fileOrigin].find(([id]) => this.files.get(id)?.path === problem.path)?.[1];
    refuse(
      'invalid',
      `${origin ? `${origin} ` : ''}file ${shown(problem.path)}: embeds files more than ${MAX_EMBED_DEPTH} levels deep (${problem.chain.map(shown).join(' -> ')})`,
    );
  }
}

function stripSlash(path: string): string {
  return path.startsWith('/') ? path.slice(1) : path;
}
