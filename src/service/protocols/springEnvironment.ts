/**
 * Spring Cloud Config Server's read model over a cfghub repository: the mapping of Spring's
 * application, profiles and label onto a repository, a context and a point in its history, and
 * the `Environment` document a Spring client (Spring Boot's `configserver:` import, Micronaut,
 * Quarkus, Steeltoe, the Node clients) reads.
 *
 * - application = the repository, written `account.repository` (the first split at a dot that
 *   names an existing repository wins, as account and repository names may hold dots themselves);
 * - profiles = the context items in level order, comma-separated; fewer items than levels leave
 *   the rest `*`; Spring's `default` alone (what clients send without a profile) is every level `*`;
 * - label = a tag, a commit id (7 to 40 hex digits) or an ISO 8601 date, with `(_)` for `/` as
 *   Spring writes it; `main` and `master` (the branch names clients send by default) are the head.
 *
 * Property sources: one per stored context that wins at least one key, most specific first, so
 * a client merging them Spring's way (the first source holding a name wins) reads exactly what
 * `/rest/pull` resolves. A sealed value (its security group not opened by the reader) is left out.
 */
import { createHash } from 'node:crypto';
import { WILDCARD, parseRequestContext, type Context } from '../../domain/context.js';
import type { Steps } from '../../lib/steps.js';
import { ServiceError } from '../errors.js';
import type { ReadTarget } from '../read/read.js';
import { resolvedKeys, typedValue, type ResolvedKey } from './resolvedKeys.js';

/** Spring's name for "no profile", sent by clients when none is configured. */
const DEFAULT_PROFILE = 'default';
/** Labels that name the head: the branch names Spring clients send when configured with none. */
const HEAD_LABELS = new Set(['main', 'master']);
/** Longest application name, profiles list and label looked at: bounded work for any input. */
export const MAX_SPRING_SEGMENT = 1024;

export interface SpringPropertySource {
  readonly name: string;
  readonly source: Record<string, unknown>;
}

export interface SpringEnvironment {
  readonly name: string;
  readonly profiles: readonly string[];
  readonly label: string | null;
  readonly version: string;
  readonly state: string;
  readonly propertySources: readonly SpringPropertySource[];
}

/** The (account, repository) pairs an application name may mean, in the order they are tried. */
export function repositoryCandidates(application: string): [string, string][] {
  const out: [string, string][] = [];
  for (let i = application.indexOf('.'); i !== -1; i = application.indexOf('.', i + 1)) {
    const account = application.slice(0, i);
    const name = application.slice(i + 1);
    if (account && name) out.push([account, name]);
  }
  return out;
}

/** The profiles of a request as a list (comma-separated, blanks dropped). */
export function profileList(profiles: string): string[] {
  return profiles
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}

/** The context the profiles name: items in level order, `*` for the levels left out. */
export function contextOfProfiles(profiles: readonly string[], levels: readonly string[]): Context {
  const items = profiles.length === 1 && profiles[0].toLowerCase() === DEFAULT_PROFILE ? [] : [...profiles];
  if (items.length > levels.length) {
    throw new ServiceError(
      'invalid_argument',
      `${items.length} profiles given; the repository's context levels are ${levels.join(',')}, so at most ${levels.length} (one item per level, in that order)`,
    );
  }
  while (items.length < levels.length) items.push(WILDCARD);
  const parsed = parseRequestContext(items.join(';'), levels);
  if (!parsed.ok) throw new ServiceError('invalid_argument', parsed.problem.replace(/^Context/, 'Profile'));
  return parsed.context;
}

/** A label as cfghub reads it: `(_)` is `/`; undefined for the head. */
export function labelPoint(label: string | undefined): string | undefined {
  if (label === undefined || HEAD_LABELS.has(label.toLowerCase())) return undefined;
  return label.replaceAll('(_)', '/');
}

/** The name of the property source of a stored context. */
function sourceName(target: ReadTarget, commitId: string, context: string): string {
  return `cfghub:${target.account}/${target.name}@${commitId}#${context}`;
}

/** The keys grouped by the stored context that won them, most specific first (ties by context text). */
function bySource(keys: readonly ResolvedKey[]): ResolvedKey[][] {
  const groups = new Map<string, ResolvedKey[]>();
  for (const key of keys) {
    if (key.text === undefined) continue; // sealed for this reader: never handed out
    const group = groups.get(key.context);
    if (group) group.push(key);
    else groups.set(key.context, [key]);
  }
  return [...groups.values()].sort(
    (a, b) => b[0].weight - a[0].weight || (a[0].context < b[0].context ? -1 : a[0].context > b[0].context ? 1 : 0),
  );
}

/** A property's value as Spring sources hold it: booleans and numbers typed, everything else text. */
const springValue = (key: ResolvedKey): unknown => typedValue(key.vdt, key.text ?? null, 'text');

/** The Environment document of an application read at a commit for a context. */
export function* springEnvironmentSteps(
  target: ReadTarget,
  commitId: string,
  request: { readonly application: string; readonly profiles: readonly string[]; readonly label?: string },
  context: Context,
): Steps<SpringEnvironment> {
  const keys = yield* resolvedKeys(target, context);
  const propertySources: SpringPropertySource[] = bySource(keys).map((group) => {
    const source: Record<string, unknown> = Object.create(null);
    for (const key of group) source[key.key] = springValue(key);
    return { name: sourceName(target, commitId, group[0].context), source };
  });
  // The state names the content alone (not the commit): it changes only when what this reader gets changes.
  const state = createHash('sha256')
    .update(JSON.stringify(propertySources.map((s) => [s.name.slice(s.name.indexOf('#')), s.source])))
    .digest('hex')
    .slice(0, 40);
  return {
    name: request.application,
    profiles: [...request.profiles],
    label: request.label ?? null,
    version: commitId,
    state,
    propertySources,
  };
}

/** The resolved properties by name (sealed ones left out), for the `.json` rendering. */
export function* springPropertiesSteps(target: ReadTarget, context: Context): Steps<Record<string, unknown>> {
  const out: Record<string, unknown> = Object.create(null);
  for (const key of yield* resolvedKeys(target, context)) if (key.text !== undefined) out[key.key] = springValue(key);
  return out;
}
