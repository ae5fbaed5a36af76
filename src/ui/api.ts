/**
 * The console's only way to the server: the public REST API through the project's one client
 * (src/client), whose answers are checked against the one definition of each wire shape
 * (src/api), with the token the user signed in with. The token lives in sessionStorage (gone when
 * the tab closes) and travels only in the `Client-Token` header, never in a URL.
 *
 * A session is a client token of one repository: it goes only to requests about that repository.
 * An admin token is held apart (admin.ts): it goes only to the admin API, as `Authorization: Bearer`.
 */
import type {
  ChangeRequestAnswer,
  DiffAnswer,
  DryRunAnswer,
  ExplainAnswer,
  ExportedFile,
  ExportedKey as ExportedKeyAnswer,
  ExportedValue,
  FileChangeAnswer,
  HistoryAnswer,
  HistoryCommit,
  InfoAnswer,
  KeyChangeAnswer,
  ListedFile,
  ListedTag,
  PullAnswerBody,
  PulledProperty,
  ResolvedDiffAnswer,
} from '../api/answers';
import type { PushBodyInput } from '../api/pushBody';
import { Client, type RepositoryRecord, type Rollback } from '../client/index';
import { ClientError, PushRefusedError, type Fetch } from '../client/errors';
import { storedSession } from './storedSession';

export { ClientError };
export type {
  DryRunAnswer,
  ExplainAnswer,
  ExportedFile,
  ExportedValue,
  PulledProperty,
  PushBodyInput,
  RepositoryRecord,
  ResolvedDiffAnswer as ResolvedDiff,
};
/** A key as the export gives it, with all its values. */
export type ExportedKey = ExportedKeyAnswer & { values: ExportedValue[] };
export type TagInfo = ListedTag;
export type FileInfo = ListedFile;
export type KeyChange = KeyChangeAnswer;
export type FileChange = FileChangeAnswer;
export type Commit = HistoryCommit;
export type HistoryPage = HistoryAnswer;
export type Diff = DiffAnswer;
export type ChangeRequestInfo = ChangeRequestAnswer;
/** What a commit or a diff changed: the part history and diff answers share. */
export type Changes = Pick<HistoryCommit, 'keys' | 'files' | 'settings' | 'other' | 'problems'>;

export interface Session {
  readonly kind: 'client';
  readonly token: string;
  readonly account: string;
  readonly repository: string;
}

const stored = storedSession<Session>('cfghub.session', (s) => s.kind === 'client' && typeof s.token === 'string');

export const loadSession = (): Session | undefined => stored.load();

export const saveSession = (session: Session | undefined): void => stored.save(session);

export interface RepoRef {
  readonly account: string;
  readonly repository: string;
}

export const sameRepo = (a: RepoRef, b: RepoRef) =>
  a.account.toLowerCase() === b.account.toLowerCase() && a.repository.toLowerCase() === b.repository.toLowerCase();

const fullName = (repo: RepoRef) => `${repo.account}/${repo.repository}`;

let session: Session | undefined;
export const setCurrentSession = (next: Session | undefined) => {
  session = next;
};

/** The browser's fetch as the console calls it: nothing cached, no cookies (the token is the only credential). */
export const consoleFetch: Fetch = (input, init) => fetch(input, { ...init, cache: 'no-store', credentials: 'omit' });

/**
 * The client of a request about `repo`: with the session's token when the session is that
 * repository's (or with `token`, when signing in); a change is named as the console's
 * (`Application-Name`), a read is not (the read record lists the applications that read).
 */
function clientFor(repo: RepoRef | undefined, options: { token?: string; change?: boolean } = {}): Client {
  const token = options.token ?? (session && repo && sameRepo(session, repo) ? session.token : undefined);
  return new Client({
    server: location.origin,
    token,
    applicationName: options.change ? 'cfghub-console' : undefined,
    fetch: consoleFetch,
  });
}

// ---- the endpoints the console uses (docs/http-api.md) ----

export const listRepositories = (): Promise<RepositoryRecord[]> => clientFor(undefined).listRepositories();

/** What a repository holds, with its levels' items, files and tags, and the head it was read at. */
export interface RepoInfo extends InfoAnswer {
  readonly contextElements: Record<string, string[]>;
  readonly files: FileInfo[];
  readonly tags: TagInfo[];
  /** The commit the answer was read at (the head): the Commit header. */
  readonly head?: string;
}

export async function repoInfo(repo: RepoRef): Promise<RepoInfo> {
  const { info, head } = await clientFor(repo).infoAtHead(fullName(repo), {
    contextElements: true,
    files: true,
    tags: true,
  });
  return { ...info, contextElements: info.contextElements ?? {}, files: info.files ?? [], tags: info.tags ?? [], head };
}

/** Which repository a token belongs to: `/rest/info` on the token form names it. */
export const whoseToken = (token: string) => clientFor(undefined, { token }).info(undefined);

export async function exportRepo(repo: RepoRef): Promise<{ keys: ExportedKey[]; files: ExportedFile[] }> {
  const answer = await clientFor(repo).export(fullName(repo));
  const keys: ExportedKey[] = [];
  const files: ExportedFile[] = [];
  for (const element of answer.data) {
    if (typeof element.key === 'string') {
      const key = element as ExportedKeyAnswer;
      keys.push({ ...key, values: key.values ?? [] });
    } else files.push(element as ExportedFile);
  }
  return { keys, files };
}

/** A pull's answer, with its properties and files (empty when the context resolves to none). */
export interface Pull extends PullAnswerBody {
  readonly properties: NonNullable<PullAnswerBody['properties']>;
  readonly files: NonNullable<PullAnswerBody['files']>;
}

export async function pull(repo: RepoRef, context: string): Promise<Pull> {
  const { body } = await clientFor(repo).pull(fullName(repo), {
    context,
    includeValueContext: true,
    includeComments: true,
  });
  return { ...body!, properties: body?.properties ?? {}, files: body?.files ?? {} };
}

export const history = (repo: RepoRef, before?: string, limit = 20) =>
  clientFor(repo).history(fullName(repo), { before, limit });

export const diff = (repo: RepoRef, from: string, to: string, context: string | undefined) =>
  clientFor(repo).diff(fullName(repo), from, { to: to || undefined, context: context || undefined });

/** Which value of a key wins for a context and why; with the session's token, whether it could change it. */
export const explainKey = (repo: RepoRef, key: string, context: string) =>
  clientFor(repo).explain(fullName(repo), key, context);

export interface PushOutcome {
  /** The new head (or the unchanged one) after a 200. */
  readonly commit?: string;
  /** A 304's reason, from its ETag. */
  readonly refusal?: string;
}

/**
 * A push: 200 with the commit, or 304 with the reason (a refusal changes nothing). `onHead` is the
 * commit its preview was made on: the push is refused if the head has moved since (If-Match), so
 * what is committed is what the preview showed.
 */
export async function pushChanges(repo: RepoRef, body: PushBodyInput, onHead?: string): Promise<PushOutcome> {
  try {
    return await clientFor(repo, { change: true }).pushBody(fullName(repo), body, { ifHead: onHead });
  } catch (error) {
    if (error instanceof PushRefusedError) return { refusal: error.reason };
    throw error;
  }
}

/** The same push as a dry run (`Dry-Run: true`): what it would do, context by context; nothing is written. */
export const previewPush = (repo: RepoRef, body: PushBodyInput): Promise<DryRunAnswer> =>
  clientFor(repo, { change: true }).dryRunBody(fullName(repo), body);

export type { Rollback };

/**
 * A revert or restore: 200 with the commit it made (a refusal is a ClientError with the server's
 * message). `onHead` is the commit its preview was made on (If-Match), as for a push.
 */
export const rollback = (repo: RepoRef, change: Rollback, onHead?: string): Promise<PushOutcome> => {
  const client = clientFor(repo, { change: true });
  const options = { comment: change.comment, ifHead: onHead };
  return change.kind === 'revert'
    ? client.revert(fullName(repo), change.target, options)
    : client.restore(fullName(repo), change.target, options);
};

/** The same revert or restore as a dry run (`Dry-Run: true`): what it would do, context by context; nothing is written. */
export const previewRollback = (repo: RepoRef, change: Rollback): Promise<DryRunAnswer> =>
  clientFor(repo, { change: true }).dryRunRollback(fullName(repo), change);

// --- change requests (docs/changes.md) ----------------------------------------------------------

/** Sends the collected changes as a change request instead of a push. */
export const createChangeRequest = (repo: RepoRef, title: string, body: PushBodyInput) =>
  clientFor(repo, { change: true }).createChange(fullName(repo), title, body);

export const listChangeRequests = (repo: RepoRef) => clientFor(repo).listChanges(fullName(repo));

export const showChangeRequest = (repo: RepoRef, id: number) => clientFor(repo).showChange(fullName(repo), id);

/** Approves, applies or closes a change request; the server's refusal (a conflict, a self-approval) is a ClientError. */
export async function actOnChangeRequest(
  repo: RepoRef,
  id: number,
  action: 'approve' | 'apply' | 'close',
): Promise<void> {
  const client = clientFor(repo, { change: true });
  if (action === 'apply') await client.applyChange(fullName(repo), id);
  else await client.reviewChange(fullName(repo), id, action);
}
