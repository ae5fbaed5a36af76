/**
 * The rules a commit pushed with git passes, weighed as a REST push's are, on the finished state
 * the commit holds (`after`) against the state of its parent (`before`): what the REST push checks
 * element by element (applyPush.ts) is checked here on the changes between the two.
 *
 * - The layout was read already: a commit the server cannot read never gets here.
 * - The files the admin commands own (settings, security groups, access rules, context groups)
 *   are not changed by a push; the schemas are, as `schemas` in a REST push (not by a token of an
 *   access rule set while access controls are on).
 * - Keys: push disabled for the key (unless the token may force), value types on and known,
 *   values fit their type, at most MAX_VALUES_PER_KEY values.
 * - Security groups: touching a secured key or file, or a new variant of a secured file's path,
 *   needs the group's key, held by the token (a git client has no other way to give a password);
 *   a secured key's or file's changed values must be sealed (a secret value in the clear is
 *   refused) and open with the group's key for their own key and context.
 * - References (`${ key }` in files, FileRef and FileEmbed values) and embed depth.
 * - Access rules and context group conflicts (the write guard), then the schemas.
 */
import { contextId, formatContext } from '../../domain/context.js';
import type { FileRecord, KeyRecord, PushChanges } from '../../domain/model.js';
import { isValidKeyName, keyId } from '../../domain/names.js';
import { MAX_VALUES_PER_KEY } from '../../domain/pushRequest.js';
import { brokenReference } from '../../domain/brokenReference.js';
import { deepestEmbedProblem } from '../../domain/embedDepth.js';
import { MAX_EMBED_DEPTH } from '../../domain/renderLimits.js';
import { findGroup } from '../../domain/securityGroups.js';
import { describeType, fitsType } from '../../domain/valueTypes.js';
import type { Steps } from '../../lib/steps.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { SETTINGS_FILE, SECURITY_GROUPS_FILE } from '../../layout/layout.js';
import { ACCESS_RULES_FILE, CONTEXT_GROUPS_FILE } from '../../layout/accessLayout.js';
import { schemaRefusalSteps } from '../schemas/schemaCheck.js';
import type { KeyRing } from '../security/keyRing.js';
import { fileIdentity, isSealed, open, valueIdentity } from '../security/sealing.js';
import { guardProblemSteps, snapshotChanges, type Writer } from './writeGuard.js';

/** Who pushed, as far as the rules care. */
export interface GitPusher extends Writer {
  /** The token may write keys whose `push` flag is false. */
  readonly forceKeyPush: boolean;
  /** The token's label, for the log and the rules that name identities. */
  readonly tokenLabel?: string;
}

/** Keys weighed between two pauses. */
const KEYS_PER_STEP = 64;

/** The changes a commit makes to its parent, schemas included when they change. */
export function commitChanges(before: Snapshot, after: Snapshot): PushChanges {
  const changes = snapshotChanges(before, after);
  return before.schemasBlobId === after.schemasBlobId ? changes : { ...changes, schemas: after.schemas };
}

/**
 * Why the commit that makes `after` from `before` is refused, or undefined. `ring` holds the
 * group keys the pusher's token is bound to.
 */
export function* pushedCommitProblemSteps(
  before: Snapshot,
  after: Snapshot,
  changes: PushChanges,
  pusher: GitPusher,
  ring: KeyRing,
): Steps<string | undefined> {
  const managed = managedFileChanged(before, after);
  if (managed) return managed;
  if (
    before.schemasBlobId !== after.schemasBlobId &&
    pusher.ruleSet !== undefined &&
    before.settings.accessControlsEnabled
  )
    return `a token of rule set ${pusher.ruleSet} cannot change the schemas (schemas.yaml)`;
  let weighed = 0;
  for (const [id, key] of changes.keys) {
    const problem = keyProblem(before, before.key(id), key, pusher, ring);
    if (problem) return problem;
    if (++weighed % KEYS_PER_STEP === 0) yield;
  }
  yield;
  for (const [id, file] of changes.files) {
    const problem = fileProblem(before, before.file(id), file, ring);
    if (problem) return problem;
    if (++weighed % KEYS_PER_STEP === 0) yield;
  }
  yield;
  const broken = brokenReference(before, changes);
  if (broken) return broken;
  const deep = embedProblem(after, changes);
  if (deep) return deep;
  yield;
  const guarded = yield* guardProblemSteps(before, changes, pusher);
  if (guarded) return guarded.reason;
  return yield* schemaRefusalSteps(before, after, changes);
}

function managedFileChanged(before: Snapshot, after: Snapshot): string | undefined {
  const owned: [string, boolean][] = [
    [`${SETTINGS_FILE} (the repository's settings)`, before.settingsBlobId !== after.settingsBlobId],
    [`${SECURITY_GROUPS_FILE} (the security groups)`, before.securityGroupsBlobId !== after.securityGroupsBlobId],
    [`${ACCESS_RULES_FILE} (the access rules)`, before.ruleSetsBlobId !== after.ruleSetsBlobId],
    [`${CONTEXT_GROUPS_FILE} (the context groups)`, before.contextGroupsBlobId !== after.contextGroupsBlobId],
  ];
  const changed = owned.find(([, differs]) => differs);
  if (!changed) return undefined;
  return `${changed[0]} is changed with cfghub's commands or admin API, not by a push`;
}

/** The groups a change of a secured key or file needs the key of, missing from the ring. */
function missingGroup(ring: KeyRing, ...groups: (string | undefined)[]): string | undefined {
  return groups.find((group) => group !== undefined && !ring.has(group));
}

function needsGroup(what: string, group: string): string {
  return `${what}: changing it needs the key of security group ${group}, and this token is not bound to it (bind the token to the group, or push through the REST API with the group's password)`;
}

function keyProblem(
  before: Snapshot,
  was: KeyRecord | undefined,
  is: KeyRecord | null,
  pusher: GitPusher,
  ring: KeyRing,
): string | undefined {
  const name = (is ?? was)?.key ?? '';
  const what = `key ${name}`;
  if (was && !was.push && !pusher.forceKeyPush) return `${what}: push is disabled for this key`;
  const clear = is && clearSecret(was, is);
  if (clear) return `${what}: ${clear}`;
  const missing = missingGroup(ring, was?.securityGroup, is?.securityGroup);
  if (missing) return needsGroup(what, missing);
  if (!is) return undefined;
  if (!isValidKeyName(is.key)) return `${what}: key names are 1-120 letters, digits and . _ - + [ ] ( ) *`;
  if (!before.settings.vdtEnabled && is.vdt !== 'Text')
    return `${what}: value data types are off in this repository, so its type (vdt) must be Text`;
  if (is.values.length > MAX_VALUES_PER_KEY)
    return `${what}: holds ${is.values.length} values, more than the ${MAX_VALUES_PER_KEY} a key may hold`;
  if (is.securityGroup !== undefined) {
    if (!before.settings.securityEnabled) return `${what}: security groups are off in this repository`;
    if (!findGroup(before.securityGroups, is.securityGroup))
      return `${what}: security group ${is.securityGroup} does not exist`;
  }
  const wasValues = new Map((was?.values ?? []).map((value) => [contextId(value.context), value]));
  for (const value of is.values) {
    const cid = contextId(value.context);
    const at = `${what}: the value at context ${formatContext(value.context)}`;
    if (is.securityGroup === undefined) {
      if (!fitsType(is.vdt, value.value)) return `${at} is not ${describeType(is.vdt)}`;
      continue;
    }
    const old = wasValues.get(cid);
    if (value.value === null || (old?.value === value.value && was?.securityGroup === is.securityGroup)) continue;
    const key = ring.key(is.securityGroup)!;
    if (open(key.key, key.keyId, value.value, valueIdentity(keyId(is.key), cid)) === undefined)
      return `${at} is sealed, but not for this key and context with the key of security group ${is.securityGroup}`;
  }
  return undefined;
}

/** The first changed value of a secured key that is not sealed, described; whoever pushes it, it is refused. */
function clearSecret(was: KeyRecord | undefined, is: KeyRecord): string | undefined {
  if (is.securityGroup === undefined) return undefined;
  const wasValues = new Map((was?.values ?? []).map((value) => [contextId(value.context), value.value]));
  for (const value of is.values) {
    if (value.value === null || isSealed(value.value) || wasValues.get(contextId(value.context)) === value.value)
      continue;
    return `the value at context ${formatContext(value.context)} is in the clear, but the key is in security group ${is.securityGroup}: a secret value is never pushed in the clear (push it through the REST API, which seals it)`;
  }
  return undefined;
}

function fileProblem(
  before: Snapshot,
  was: FileRecord | undefined,
  is: FileRecord | null,
  ring: KeyRing,
): string | undefined {
  const file = (is ?? was)!;
  const what = `file ${file.path} at context ${formatContext(file.context)}`;
  const missing = missingGroup(ring, was?.securityGroup, is?.securityGroup);
  if (missing) return needsGroup(what, missing);
  if (!is) return undefined;
  if (!was) {
    // A new variant of a secured file's path could shadow the secret file for a context's readers.
    for (const other of before.files()) {
      if (other.path !== is.path || other.securityGroup === undefined) continue;
      if (!ring.has(other.securityGroup)) return needsGroup(what, other.securityGroup);
    }
  }
  if (is.securityGroup === undefined) return undefined;
  if (!before.settings.securityEnabled) return `${what}: security groups are off in this repository`;
  if (!findGroup(before.securityGroups, is.securityGroup))
    return `${what}: security group ${is.securityGroup} does not exist`;
  if (was?.content === is.content && was.securityGroup === is.securityGroup) return undefined;
  const key = ring.key(is.securityGroup)!;
  if (open(key.key, key.keyId, is.content, fileIdentity(is.path, contextId(is.context))) === undefined)
    return `${what} is sealed, but not for this path and context with the key of security group ${is.securityGroup}`;
  return undefined;
}

function embedProblem(after: Snapshot, changes: PushChanges): string | undefined {
  const touchesEmbeds = changes.files.size > 0 || [...changes.keys.values()].some((key) => key?.vdt === 'FileEmbed');
  if (!touchesEmbeds) return undefined;
  const problem = deepestEmbedProblem(after.files(), (id) => after.key(id));
  if (!problem) return undefined;
  return `file ${problem.path}: embeds files more than ${MAX_EMBED_DEPTH} levels deep (${problem.chain.join(' -> ')})`;
}
