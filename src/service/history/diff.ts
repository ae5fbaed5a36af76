/**
 * The difference between two points of a repository: the keys, values and files
 * that changed, from the trees; and, for a context, what a client of that context sees change:
 * the pulls at both points (resolved properties, rendered files) compared.
 */
import { parseRequestContext } from '../../domain/context.js';
import type { GitRepository } from '../../disk/repository.js';
import type { Snapshot } from '../../layout/snapshot.js';
import { changesBetween, summarizeChangesSteps, type ChangeSummary } from './commitSummary.js';
import { ServiceError } from '../errors.js';
import { resolvePoint } from '../read/historyPoints.js';
import { pullBodySteps } from '../read/read.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import type { Steps } from '../../lib/steps.js';
import { LayoutError } from '../../layout/errors.js';

export interface DiffQuery {
  readonly from: string;
  /** Defaults to the head. */
  readonly to?: string;
  /** A context, one item per level: adds the difference of the resolved configuration. */
  readonly context?: string;
}

export interface Changed<T> {
  readonly added: Record<string, T>;
  readonly changed: Record<string, { before: T; after: T }>;
  readonly removed: Record<string, T>;
}

export interface ResolvedDiff {
  readonly context: string;
  readonly properties: Changed<unknown>;
  readonly files: Changed<unknown>;
}

export interface DiffBody extends ChangeSummary {
  readonly from: string;
  readonly to: string;
  readonly resolved?: ResolvedDiff;
}

/** `head` is the head as the caller read it. */
export async function diff(repository: GitRepository, head: string, query: DiffQuery): Promise<DiffBody> {
  const from = await resolvePoint(repository, head, query.from);
  const to = query.to === undefined ? head : await resolvePoint(repository, head, query.to);
  // In slices: two points far apart can differ by every key of the repository.
  const slices = new TimeSlices();
  const body: DiffBody = {
    from,
    to,
    ...(await slices.run(summarizeChangesSteps(await changesBetween(repository, from, to, slices)))),
  };
  if (query.context === undefined) return body;
  const [before, after] = [await snapshotAt(repository, from), await snapshotAt(repository, to)];
  const parsed = parseRequestContext(query.context, after.settings.levels);
  if (!parsed.ok) throw new ServiceError('invalid_argument', parsed.problem);
  const pull = async (snapshot: Snapshot) =>
    (await slices.run(
      pullBodySteps(
        { repository, account: repository.account, name: repository.name, snapshot },
        query.context!,
        parsed.context,
        {
          includeComments: false,
          includeValueContext: false,
          noProperties: false,
          noFiles: false,
        },
      ),
    )) as { properties: Record<string, unknown>; files: Record<string, unknown> };
  const [was, is] = [await pull(before), await pull(after)];
  return {
    ...body,
    resolved: {
      context: query.context,
      properties: await slices.run(compare(was.properties, is.properties)),
      files: await slices.run(compare(was.files, is.files)),
    },
  };
}

/** A snapshot, where content that breaks the layout rules is a 409 naming the file and commit. */
async function snapshotAt(repository: GitRepository, commitId: string): Promise<Snapshot> {
  try {
    return await repository.snapshot(commitId);
  } catch (error) {
    if (error instanceof LayoutError) throw error.within('the configuration cannot be resolved');
    throw error;
  }
}

/** As steps (src/lib/steps.ts): a pause is safe after each name. */
function* compare<T>(before: Record<string, T>, after: Record<string, T>): Steps<Changed<T>> {
  // Null prototypes: a key may be named __proto__.
  const out: Changed<T> = { added: Object.create(null), changed: Object.create(null), removed: Object.create(null) };
  for (const [name, value] of Object.entries(after)) {
    if (!Object.hasOwn(before, name)) out.added[name] = value;
    else if (JSON.stringify(before[name]) !== JSON.stringify(value))
      out.changed[name] = { before: before[name], after: value };
    yield;
  }
  for (const [name, value] of Object.entries(before)) {
    if (!Object.hasOwn(after, name)) out.removed[name] = value;
    yield;
  }
  return out;
}
