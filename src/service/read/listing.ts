/**
 * The repository listing (`GET /rest/info/all`, `cfghub repo list`): one record per repository,
 * computed from its current head, sorted by account then name (lower case, by code point).
 * A repository that cannot be read (a commit made with plain git that breaks the layout, say) is
 * left out of the records (every record carries every field the seed marks
 * "always", which a client reading the fields relies on), reported to `onUnreadable`, and kept
 * apart in `unreadable` with what is wrong, for the operator's tools; it never hides the others.
 */
import { afterQueuedWatchEvents } from '../../disk/refs/changeWatch.js';
import { withoutPaths } from '../../domain/reasons.js';
import { type RepositoryLocation, type RepositoryRegistry } from '../../disk/registry.js';
import type { GitRepository } from '../../disk/repository.js';
import type { TokenService } from '../admin/tokens.js';
import { LayoutError } from '../../layout/errors.js';
import { AmbiguousRepositoryError } from '../../disk/errors.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import type { ApprovalRule } from '../../domain/approvalRules.js';
import type { z } from 'zod';
import { repositoryRecord as repositoryRecordShape } from '../../api/admin.js';
import { readHeadSummary, writeHeadSummary } from '../../disk/records/headSummary.js';
import type { Snapshot } from '../../layout/snapshot.js';

export interface RepositoryRecord {
  readonly account: string;
  readonly name: string;
  readonly isPrivate: boolean;
  readonly isPersonal: boolean;
  readonly description?: string;
  readonly created: string;
  readonly accessControlsEnabled: boolean;
  readonly vdtEnabled: boolean;
  readonly securityEnabled: boolean;
  readonly contextGroupsEnabled: boolean;
  readonly keyCount: number;
  readonly valueCount: number;
  readonly userCount: number;
  readonly context: readonly string[];
  /** Contexts whose changes need an approved change request; absent when there are none. */
  readonly requiredApprovals?: readonly ApprovalRule[];
  /** The repository's alias (the Spring application that names it); absent when it has none. */
  readonly alias?: string;
}

/** A repository the listing cannot read: what is wrong, and where when known. */
export interface UnreadableRecord {
  readonly account: string;
  readonly name: string;
  /**
   * `repository_content_invalid` (content breaks the layout), `repository_name_conflict` (two
   * folders hold the name in different cases; neither is served) or `repository_unreadable`.
   */
  readonly error: 'repository_content_invalid' | 'repository_name_conflict' | 'repository_unreadable';
  readonly message: string;
  readonly file?: string;
  readonly commit?: string;
}

export function unreadableRecord(account: string, name: string, error: unknown): UnreadableRecord {
  if (error instanceof AmbiguousRepositoryError)
    return { account, name, error: 'repository_name_conflict', message: error.message };
  if (error instanceof LayoutError) {
    return {
      account,
      name,
      error: 'repository_content_invalid',
      message: error.message,
      ...(error.file ? { file: error.file } : {}),
      ...(error.commit ? { commit: error.commit } : {}),
    };
  }
  return {
    account,
    name,
    error: 'repository_unreadable',
    message: withoutPaths(error instanceof Error ? error.message : String(error)),
  };
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function byAccountThenName(a: { account: string; name: string }, b: { account: string; name: string }): number {
  return (
    byCodePoint(a.account.toLowerCase(), b.account.toLowerCase()) ||
    byCodePoint(a.name.toLowerCase(), b.name.toLowerCase()) ||
    byCodePoint(a.account, b.account) ||
    byCodePoint(a.name, b.name)
  );
}

export interface Listing {
  /** The readable repositories' records, every field of ConfigHub's listing present. */
  readonly records: RepositoryRecord[];
  /** The repositories left out of `records`, with what is wrong, in the same order. */
  readonly unreadable: UnreadableRecord[];
  /**
   * Names every repository with its head and user count: equal fingerprints mean equal records,
   * so an adapter may reuse what it made of an earlier listing.
   */
  readonly fingerprint: string;
}

export async function listRepositories(
  registry: RepositoryRegistry,
  tokens: TokenService,
  onUnreadable: (repository: string, error: unknown) => void,
): Promise<Listing> {
  // Heads and the token file are trusted as their watches say; a token or a commit made just
  // before this request is seen only once the events queued before it are handed over.
  await afterQueuedWatchEvents();
  const userCounts = tokens.activeCounts();
  const records: RepositoryRecord[] = [];
  const unreadable: UnreadableRecord[] = [];
  const fingerprint: string[] = [];
  const locations = registry.locations();
  const spellings = new Map<string, RepositoryLocation[]>();
  for (const location of locations) {
    const id = `${location.account}/${location.name}`.toLowerCase();
    spellings.set(id, [...(spellings.get(id) ?? []), location]);
  }
  // A repository not read before costs its head's snapshot, read from files at once (no wait for
  // the thread pool to give the loop a turn): 1,000 of them held the event loop 250 to 600 ms in
  // one piece on a new server. In slices, other requests are answered meanwhile.
  const slices = new TimeSlices();
  for (const location of locations) {
    await slices.pause();
    const same = spellings.get(`${location.account}/${location.name}`.toLowerCase())!;
    if (same.length > 1) {
      // Names are unique without regard to case: no spelling is served, each is listed as the conflict.
      const error = new AmbiguousRepositoryError(
        `${location.account}/${location.name}`,
        same.map((l) => `${l.account}/${l.name}.git`).sort(),
      );
      onUnreadable(`${location.account}/${location.name}`, error);
      fingerprint.push(`${location.gitdir}!${error.message}`);
      unreadable.push(unreadableRecord(location.account, location.name, error));
      continue;
    }
    const repository = registry.open(location);
    try {
      const record = await recordOf(repository, userCounts);
      fingerprint.push(`${location.gitdir}@${record.head}:${record.record.userCount}`);
      records.push(record.record);
    } catch (error) {
      onUnreadable(repository.fullName, error);
      const record = unreadableRecord(repository.account, repository.name, error);
      fingerprint.push(`${location.gitdir}!${record.commit ?? ''}:${record.message}`);
      unreadable.push(record);
    }
  }
  records.sort(byAccountThenName);
  unreadable.sort(byAccountThenName);
  return { records, unreadable, fingerprint: fingerprint.join('\n') };
}

/** One repository's record, or its unreadable record (`repo create` answers with it; so does the admin API). */
export async function repositoryRecord(
  repository: GitRepository,
  tokens: TokenService,
): Promise<RepositoryRecord | UnreadableRecord> {
  try {
    return (await recordOf(repository, tokens.activeCounts())).record;
  } catch (error) {
    return unreadableRecord(repository.account, repository.name, error);
  }
}

/** What the listing says of a repository's head besides its name and user count: the same for every repository at that commit. */
const headSummary = repositoryRecordShape.omit({ account: true, name: true, userCount: true });
type HeadSummary = z.infer<typeof headSummary>;

function summaryOf(snapshot: Snapshot): HeadSummary {
  const s = snapshot.settings;
  return {
    isPrivate: s.isPrivate,
    isPersonal: s.isPersonal,
    ...(s.description ? { description: s.description } : {}),
    created: s.created,
    accessControlsEnabled: s.accessControlsEnabled,
    vdtEnabled: s.vdtEnabled,
    securityEnabled: s.securityEnabled,
    contextGroupsEnabled: s.contextGroupsEnabled,
    keyCount: snapshot.keyCount,
    valueCount: snapshot.valueCount,
    context: [...s.levels],
    ...(s.requiredApprovals ? { requiredApprovals: s.requiredApprovals.map((rule) => ({ ...rule })) } : {}),
    ...(s.alias !== undefined ? { alias: s.alias } : {}),
  };
}

/** Each repository's last summary, and the head it is of: what its summary file holds (read or written by this process). */
const summaries = new WeakMap<GitRepository, { readonly head: string; readonly summary: HeadSummary }>();

/**
 * The head's summary: as last made, from the summary kept in the repository's folder for that very
 * commit (disk/records/headSummary.ts), else from its snapshot (built already, or read now), which
 * is then kept there for the next new server.
 */
async function summaryAt(repository: GitRepository, head: string): Promise<HeadSummary> {
  const known = summaries.get(repository);
  if (known?.head === head) return known.summary;
  const built = repository.builtSnapshot(head);
  if (!built) {
    const stored = headSummary.safeParse(readHeadSummary(repository.gitdir, head));
    if (stored.success) {
      summaries.set(repository, { head, summary: stored.data });
      return stored.data;
    }
  }
  const summary = summaryOf(built ?? (await repository.snapshot(head)));
  summaries.set(repository, { head, summary });
  writeHeadSummary(repository.gitdir, head, summary);
  return summary;
}

async function recordOf(
  repository: GitRepository,
  userCounts: ReadonlyMap<string, number>,
): Promise<{ head: string; record: RepositoryRecord }> {
  const head = repository.head();
  const s = await summaryAt(repository, head);
  return {
    head,
    record: {
      account: repository.account,
      name: repository.name,
      isPrivate: s.isPrivate,
      isPersonal: s.isPersonal,
      ...(s.description !== undefined ? { description: s.description } : {}),
      created: s.created,
      accessControlsEnabled: s.accessControlsEnabled,
      vdtEnabled: s.vdtEnabled,
      securityEnabled: s.securityEnabled,
      contextGroupsEnabled: s.contextGroupsEnabled,
      keyCount: s.keyCount,
      valueCount: s.valueCount,
      userCount: userCounts.get(repository.fullName) ?? 0,
      context: s.context,
      ...(s.requiredApprovals ? { requiredApprovals: s.requiredApprovals } : {}),
      ...(s.alias !== undefined ? { alias: s.alias } : {}),
    },
  };
}
