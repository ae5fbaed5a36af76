/**
 * A dry run of a write: everything the write runs (its plan against the head: access, element
 * checks, templates; the write guard; staging; the schema check), nothing written, and what it
 * would change: the keys and files it changes, and for each context the repository names (and
 * those the request lists) whose answer would change, the keys and rendered files that change,
 * with their values before and after. Secured values and files stay sealed unless the request's
 * key ring opens their group.
 *
 * `dryRun` takes any plan against a head, as commitPlan does: a push's (push.ts), a revert's or a
 * restore's (service/history/: a restore stages on its own base, `baseOf`, and is weighed against
 * the head's state), a schemas change's, a change request's apply.
 *
 * Bounded: the contexts weighed (MAX_NAMED_CONTEXTS), the contexts listed in detail
 * (MAX_LISTED_CONTEXTS, then counted) and the text of each value and file shown (cut at
 * MAX_SHOWN_CHARS); the work runs in slices, a pause after each context and each few keys.
 */
import { formatContext, parseRequestContext, WILDCARD, type Context } from '../../domain/context.js';
import type { KeyRecord, PushChanges } from '../../domain/model.js';
import { keyId } from '../../domain/names.js';
import { readsTheSame } from '../../domain/keyReach.js';
import { requestContext, resolveValue, type RequestContext } from '../../domain/resolve.js';
import type { Steps } from '../../lib/steps.js';
import type { GitRepository } from '../../disk/repository.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import { baseAt, headSnapshot, stageOn, type BaseOf, type Planner } from './commit.js';
import { ServiceError } from '../errors.js';
import type { KeyRing } from '../security/keyRing.js';
import { openValue } from '../security/unsealing.js';
import { ContextView, typedValue } from '../read/read.js';
import { snapshotChanges, type Writer } from './writeGuard.js';
import { addNamed, namedContextsSteps, TooManyContexts, MAX_NAMED_CONTEXTS } from '../schemas/namedContexts.js';
import { reachesFiles } from '../schemas/schemaCheck.js';

/** Contexts described key by key and file by file; the others that change are counted. */
export const MAX_LISTED_CONTEXTS = 100;
/** Contexts a request may list besides the named ones. */
export const MAX_REQUESTED_CONTEXTS = 100;
/** Characters of a value or a rendered file shown; longer ones are cut and marked `truncated`. */
export const MAX_SHOWN_CHARS = 4096;
/** Key changes weighed between two pauses. */
const KEYS_PER_STEP = 64;

export interface ShownValue {
  /** The value as a pull gives it (`val`): text, or List and Map parsed; absent while sealed. */
  readonly val?: unknown;
  readonly type?: string;
  /** The security group a sealed value is in, when the request did not open it. */
  readonly encryption?: string;
  readonly truncated?: true;
}

export interface KeyEffect {
  readonly key: string;
  /** Absent where the key resolves to nothing. */
  readonly before?: ShownValue;
  readonly after?: ShownValue;
}

export interface ShownFile {
  readonly content?: string;
  readonly encryption?: string;
  readonly truncated?: true;
}

export interface FileEffect {
  readonly path: string;
  readonly before?: ShownFile;
  readonly after?: ShownFile;
}

export interface ContextEffect {
  readonly context: string;
  readonly keys: readonly KeyEffect[];
  readonly files: readonly FileEffect[];
}

export interface DryRunResult {
  readonly wouldCommit: boolean;
  /** What the write would do: make a commit, change nothing, or be refused. */
  readonly outcome: 'applied' | 'unchanged' | 'refused';
  readonly refusal?: string;
  /** Refused by the access rules. */
  readonly denied?: boolean;
  /** The head the dry run was made on. */
  readonly head: string;
  readonly changed: {
    readonly keys: readonly string[];
    readonly files: readonly { readonly path: string; readonly context: string }[];
    readonly schemas?: true;
  };
  readonly contexts: {
    /** Contexts weighed: named by the repository before or after the write, and those the request listed. */
    readonly considered: number;
    /** Distinct contexts whose answer changes. */
    readonly changed: number;
    readonly listed: readonly ContextEffect[];
    /** Changed contexts beyond the listed ones. */
    readonly more: number;
  };
}

export interface DryRunOptions {
  /** Contexts to weigh besides the ones the repository names: one item per level (`Production;Billing;node-7`). */
  readonly contexts?: readonly string[];
  /** What the request opens: secured values and files of other groups stay sealed. */
  readonly ring: () => KeyRing;
  /** The state the write is staged on when it is not the head's (restore's), as commitPlan takes it. */
  readonly baseOf?: BaseOf;
}

const NOTHING_CHANGED = {
  changed: { keys: [], files: [] },
  contexts: { considered: 0, changed: 0, listed: [], more: 0 },
} as const;

/** The answer of a dry run whose write would be refused (on `head`) for `reason`; `denied` by the access rules. */
export function refusedRun(head: string, reason: string, denied?: boolean): DryRunResult {
  return {
    wouldCommit: false,
    outcome: 'refused',
    refusal: reason,
    ...(denied ? { denied } : {}),
    head,
    ...NOTHING_CHANGED,
  };
}

/**
 * Runs `plan` on the head as commitPlan would (stageOn, on the same base), outside the repository's
 * queue (nothing is written, so nothing waits), and tells what it would do to the head's state.
 */
export async function dryRun(
  repository: GitRepository,
  plan: Planner,
  writer: Writer | undefined,
  options: DryRunOptions,
): Promise<DryRunResult> {
  if ((options.contexts?.length ?? 0) > MAX_REQUESTED_CONTEXTS)
    throw new ServiceError('invalid_argument', `a dry run lists at most ${MAX_REQUESTED_CONTEXTS} contexts`);
  const head = repository.head();
  const before = await headSnapshot(repository, head);
  const listed = (options.contexts ?? []).map((text) => listedContext(text, before));
  const slices = new TimeSlices();
  const base = options.baseOf ? await baseAt(repository, head, options.baseOf) : before;
  // A base of the caller's (restore's) is not the head's state: the schemas weigh all it brings, as commitPlan does.
  const staging = await stageOn(base, plan, writer, slices, { checkAll: options.baseOf !== undefined });
  if (staging.kind === 'refused') return refusedRun(head, staging.reason, staging.denied);
  if (staging.kind === 'unchanged') return { wouldCommit: false, outcome: 'unchanged', head, ...NOTHING_CHANGED };
  const after = staging.staged.snapshot;
  // What the write changes on the head's state: its own changes, or all that its base brings.
  const changes = base === before ? staging.changes : snapshotChanges(before, after);
  try {
    return await slices.run(effectsSteps(before, after, changes, listed, options.ring));
  } catch (error) {
    if (error instanceof TooManyContexts)
      throw new ServiceError('conflict', `the dry run cannot weigh this change: ${error.message}`);
    throw error;
  }
}

/** A context the request lists: an item at every level (a group stands for its members). */
function listedContext(text: string, base: Snapshot): Context {
  const parsed = parseRequestContext(text, base.settings.levels);
  if (!parsed.ok) throw new ServiceError('invalid_argument', `Dry-Run-Contexts: ${text}: ${parsed.problem}`);
  if (parsed.context.includes(WILDCARD))
    throw new ServiceError('invalid_argument', `Dry-Run-Contexts: ${text}: name an item at every level (no *)`);
  return parsed.context;
}

function changedNames(before: Snapshot, after: Snapshot, changes: PushChanges): DryRunResult['changed'] {
  const keys = [...changes.keys]
    .map(([id, key]) => (key ?? before.key(id))?.key ?? id)
    .sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1));
  const files = [...changes.files].map(([id, file]) => {
    const record = file ?? before.file(id) ?? after.file(id);
    return { path: record?.path ?? id.split('\n')[0], context: record ? formatContext(record.context) : '' };
  });
  return { keys, files, ...(changes.schemas ? { schemas: true as const } : {}) };
}

function* effectsSteps(
  before: Snapshot,
  after: Snapshot,
  changes: PushChanges,
  listedContexts: readonly Context[],
  ringOf: () => KeyRing,
): Steps<DryRunResult> {
  const contexts = new Map(yield* namedContextsSteps(before));
  const groups = after.groups();
  for (const key of changes.keys.values())
    for (const value of key?.values ?? []) addNamed(contexts, value.context, groups);
  for (const file of changes.files.values()) if (file) addNamed(contexts, file.context, groups);
  for (const context of listedContexts) addNamed(contexts, context, groups);
  if (contexts.size > MAX_NAMED_CONTEXTS) throw new TooManyContexts();
  // Every key is weighed when what resolution depends on changes (settings, context groups): not by a push.
  const everyKey = changes.settings !== undefined || changes.contextGroups !== undefined;
  const keyIds = everyKey ? new Set([...keysOf(before), ...keysOf(after)]) : new Set(changes.keys.keys());
  const files = reachesFiles(before, after, changes)
    ? new Set([...pathsOf(before), ...pathsOf(after)])
    : new Set<string>();
  const ring = ringOf();
  const listed: ContextEffect[] = [];
  let changed = 0;
  for (const context of contexts.values()) {
    const requestBefore = requestContext(context, before.groups());
    const requestAfter = requestContext(context, groups);
    const keys: KeyEffect[] = [];
    let weighed = 0;
    for (const id of keyIds) {
      const effect = keyEffect(before.key(id) ?? null, after.key(id) ?? null, requestBefore, requestAfter, ring);
      if (effect) keys.push(effect);
      if (++weighed % KEYS_PER_STEP === 0) yield;
    }
    const fileEffects = files.size ? fileEffectsAt(before, after, requestBefore, requestAfter, ring, files) : [];
    if (keys.length || fileEffects.length) {
      changed++;
      if (listed.length < MAX_LISTED_CONTEXTS)
        listed.push({
          context: formatContext(context),
          keys: keys.sort((a, b) => (a.key.toLowerCase() < b.key.toLowerCase() ? -1 : 1)),
          files: fileEffects,
        });
    }
    yield;
  }
  return {
    wouldCommit: true,
    outcome: 'applied',
    head: before.commitId,
    changed: changedNames(before, after, changes),
    contexts: { considered: contexts.size, changed, listed, more: changed - listed.length },
  };
}

function* keysOf(snapshot: Snapshot): Iterable<string> {
  for (const key of snapshot.keys()) yield keyId(key.key);
}

function* pathsOf(snapshot: Snapshot): Iterable<string> {
  for (const file of snapshot.files()) yield file.path;
}

const cut = (text: string): { text: string; truncated?: true } =>
  text.length > MAX_SHOWN_CHARS ? { text: text.slice(0, MAX_SHOWN_CHARS), truncated: true } : { text };

/** A key's resolved value as a pull shows it, opened where the ring allows. */
function shownValue(key: KeyRecord, request: RequestContext, ring: KeyRing): ShownValue | undefined {
  const value = resolveValue(key, request);
  if (!value) return undefined;
  const type = key.vdt !== 'Text' ? { type: key.vdt } : {};
  const opened = openValue(key, value, ring);
  if (!opened) return { ...type, encryption: key.securityGroup };
  if (opened.text === null) return { ...type, val: null };
  const shown = cut(opened.text);
  return {
    ...type,
    val: shown.truncated ? shown.text : typedValue(key, opened.text),
    ...(shown.truncated ? { truncated: true as const } : {}),
  };
}

const sameShown = (a: ShownValue | undefined, b: ShownValue | undefined) => JSON.stringify(a) === JSON.stringify(b);

function keyEffect(
  was: KeyRecord | null,
  is: KeyRecord | null,
  requestBefore: RequestContext,
  requestAfter: RequestContext,
  ring: KeyRing,
): KeyEffect | undefined {
  if (requestBefore.groups === requestAfter.groups && readsTheSame(was, is, requestAfter)) return undefined;
  const before = was ? shownValue(was, requestBefore, ring) : undefined;
  const after = is ? shownValue(is, requestAfter, ring) : undefined;
  // Sealed on both sides: the texts are compared sealed (a new seal of the same text differs, so compare the stored values).
  if (before?.encryption !== undefined && after?.encryption !== undefined) {
    const a = resolveValue(was!, requestBefore);
    const b = resolveValue(is!, requestAfter);
    if (a?.value === b?.value) return undefined;
  } else if (sameShown(before, after)) {
    return undefined;
  }
  return { key: (is ?? was)!.key, ...(before ? { before } : {}), ...(after ? { after } : {}) };
}

type Rendered = ShownFile | undefined;

function renderedIn(view: ContextView, path: string): Rendered {
  const file = view.file(path);
  if (!file) return undefined;
  const opened = view.open(file);
  if (!opened) return { encryption: file.securityGroup, content: undefined };
  let content: string;
  try {
    content = view.render(opened).content;
  } catch (error) {
    content = `[ cannot be rendered: ${(error as Error).message} ]`;
  }
  const shown = cut(content);
  return { content: shown.text, ...(shown.truncated ? { truncated: true as const } : {}) };
}

function fileEffectsAt(
  before: Snapshot,
  after: Snapshot,
  requestBefore: RequestContext,
  requestAfter: RequestContext,
  ring: KeyRing,
  paths: ReadonlySet<string>,
): FileEffect[] {
  const was = new ContextView(before, requestBefore, ring);
  const is = new ContextView(after, requestAfter, ring);
  const effects: FileEffect[] = [];
  for (const path of [...paths].sort()) {
    const a = renderedIn(was, path);
    const b = renderedIn(is, path);
    if (JSON.stringify(a) === JSON.stringify(b)) {
      // Both sealed and unopened: compare the stored (sealed) variants.
      if (!(a?.encryption !== undefined && was.file(path)?.content !== is.file(path)?.content)) continue;
    }
    effects.push({ path, ...(a ? { before: withoutUndefined(a) } : {}), ...(b ? { after: withoutUndefined(b) } : {}) });
  }
  return effects;
}

const withoutUndefined = (file: ShownFile): ShownFile =>
  Object.fromEntries(Object.entries(file).filter(([, v]) => v !== undefined)) as ShownFile;
