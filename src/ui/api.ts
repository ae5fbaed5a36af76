/**
 * The console's only way to the server: the public REST API, with the token the user signed in
 * with. The token lives in sessionStorage (gone when the tab closes) and travels only in the
 * `Client-Token` header, never in a URL.
 *
 * A session is a client token of one repository. An admin token is held apart (admin.ts): it goes
 * only to the admin API, as `Authorization: Bearer`.
 */
import type { DryRunAnswer } from '../api/answers';
import { storedSession } from './storedSession';

export type { DryRunAnswer };

export interface Session {
  readonly kind: 'client';
  readonly token: string;
  readonly account: string;
  readonly repository: string;
}

const stored = storedSession<Session>('cfghub.session', (s) => s.kind === 'client' && typeof s.token === 'string');

export const loadSession = (): Session | undefined => stored.load();

export const saveSession = (session: Session | undefined): void => stored.save(session);

/** An answer other than 2xx, with the server's own message as it is. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

export interface RepoRef {
  readonly account: string;
  readonly repository: string;
}

export const sameRepo = (a: RepoRef, b: RepoRef) =>
  a.account.toLowerCase() === b.account.toLowerCase() && a.repository.toLowerCase() === b.repository.toLowerCase();

const repoPath = (repo: RepoRef) => `${encodeURIComponent(repo.account)}/${encodeURIComponent(repo.repository)}`;

interface CallOptions {
  readonly method?: 'GET' | 'POST';
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
  /** The repository the call is about: the session's token goes only to its own repository. */
  readonly repo?: RepoRef;
  /** A token to use instead of the session's (signing in). */
  readonly token?: string;
}

export interface Answer<T> {
  readonly status: number;
  readonly etag: string | null;
  /** The commit a read served (its `Commit` header), when it names one. */
  readonly commit: string | null;
  readonly json: T;
}

let session: Session | undefined;
export const setCurrentSession = (next: Session | undefined) => {
  session = next;
};

export async function call<T = unknown>(path: string, options: CallOptions = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  const token =
    options.token ?? (session && options.repo && sameRepo(session, options.repo) ? session.token : undefined);
  if (token) headers['Client-Token'] = token;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method: options.method ?? 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch {
    throw new ApiError(0, 'unreachable', 'The server did not answer. Is cfghub running?');
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (response.status >= 400) {
    const body = json as { error?: string; message?: string } | undefined;
    throw new ApiError(
      response.status,
      body?.error ?? `http_${response.status}`,
      body?.message ?? `${response.status} ${response.statusText}`,
      json,
    );
  }
  return {
    status: response.status,
    etag: response.headers.get('ETag'),
    commit: response.headers.get('Commit'),
    json: json as T,
  };
}

// ---- the endpoints the console uses (README "HTTP API") ----

export interface RepositoryRecord {
  account: string;
  name: string;
  isPrivate: boolean;
  isPersonal: boolean;
  description?: string;
  created: string;
  accessControlsEnabled: boolean;
  vdtEnabled: boolean;
  securityEnabled: boolean;
  contextGroupsEnabled: boolean;
  keyCount: number;
  valueCount: number;
  userCount: number;
  context: string[];
  /** The Spring application alias, when set. */
  alias?: string;
  error?: string;
  message?: string;
}

export const listRepositories = () => call<RepositoryRecord[]>('/rest/info/all').then((a) => a.json);

export interface TagInfo {
  name: string;
  readme: string;
  date: string;
}

export interface FileInfo {
  name: string;
  path: string;
  context: string;
  active: boolean;
  secureGroup?: string;
}

export interface RepoInfo {
  account: string;
  repository: string;
  context: string[];
  contextElements: Record<string, string[]>;
  files: FileInfo[];
  tags: TagInfo[];
  /** The commit the answer was read at (the head): the Commit header. */
  head?: string;
}

export const repoInfo = (repo: RepoRef) =>
  call<RepoInfo>(`/rest/info/${repoPath(repo)}`, {
    repo,
    headers: { 'Context-Elements': 'true', Files: 'true', Tags: 'true' },
  }).then((a) => ({ ...a.json, head: a.commit ?? undefined }));

/** Which repository a token belongs to: `/rest/info` on the token form names it. */
export const whoseToken = (token: string) =>
  call<{ account: string; repository: string }>('/rest/info', { token }).then((a) => a.json);

export interface ExportedValue {
  context: string;
  value: string | null;
  active: boolean;
}

export interface ExportedKey {
  key: string;
  readme: string;
  deprecated: boolean;
  vdt: string;
  push: boolean;
  securityGroup?: string;
  values: ExportedValue[];
}

export interface ExportedFile {
  file: string;
  context: string;
  content: string;
  active: boolean;
  securityGroup?: string;
}

export async function exportRepo(repo: RepoRef): Promise<{ keys: ExportedKey[]; files: ExportedFile[] }> {
  const answer = await call<{ data: (ExportedKey | ExportedFile)[] }>(`/rest/export/${repoPath(repo)}`, { repo });
  const keys: ExportedKey[] = [];
  const files: ExportedFile[] = [];
  for (const element of answer.json.data) {
    if ('key' in element) keys.push(element);
    else files.push(element);
  }
  return { keys, files };
}

export interface PulledProperty {
  val: unknown;
  type?: string;
  deprecated?: boolean;
  comment?: string;
  context?: string[];
  encryption?: boolean;
}

export interface PulledFile {
  content: string;
  'content-type': string;
  unresolved?: string[];
  encrypted?: string[];
  encryption?: boolean;
}

export interface Pull {
  properties: Record<string, PulledProperty>;
  files: Record<string, PulledFile>;
  context: string;
}

export const pull = (repo: RepoRef, context: string) =>
  call<Pull>(`/rest/pull/${repoPath(repo)}`, {
    repo,
    headers: { Context: context, 'Include-Value-Context': 'true', 'Include-Comments': 'true' },
  }).then((a) => a.json);

export interface ValueState {
  value: string | null;
  active: boolean;
}

export interface ValueChange {
  context: string;
  change: 'added' | 'modified' | 'deleted';
  before?: ValueState;
  after?: ValueState;
}

export interface KeyChange {
  key: string;
  change: 'added' | 'modified' | 'deleted';
  fields?: Record<string, { before: unknown; after: unknown }>;
  values?: ValueChange[];
}

export interface FileChange {
  path: string;
  context: string;
  change: 'added' | 'modified' | 'deleted';
  active: boolean;
}

export interface Changes {
  keys?: KeyChange[];
  files?: FileChange[];
  settings?: boolean;
  other?: string[];
  problems?: string[];
}

export interface Commit extends Changes {
  id: string;
  date: string;
  comment: string;
  applicationName?: string;
  token?: string;
  author: { name: string; email: string };
}

export interface HistoryPage {
  head: string;
  commits: Commit[];
  nextBefore?: string;
}

export const history = (repo: RepoRef, before?: string, limit = 20) =>
  call<HistoryPage>(
    `/rest/history/${repoPath(repo)}?limit=${limit}${before ? `&before=${encodeURIComponent(before)}` : ''}`,
    { repo },
  ).then((a) => a.json);

export interface ResolvedDiff {
  context: string;
  properties: {
    added: Record<string, { val: unknown }>;
    changed: Record<string, { before: { val: unknown }; after: { val: unknown } }>;
    removed: Record<string, { val: unknown }>;
  };
  files: {
    added?: Record<string, { content: string }>;
    changed?: Record<string, { before: { content: string }; after: { content: string } }>;
    removed?: Record<string, { content: string }>;
  };
}

export interface Diff extends Changes {
  from: string;
  to: string;
  resolved?: ResolvedDiff;
}

export function diff(repo: RepoRef, from: string, to: string, context: string | undefined) {
  const headers: Record<string, string> = { From: from };
  if (to) headers.To = to;
  if (context) headers.Context = context;
  return call<Diff>(`/rest/diff/${repoPath(repo)}`, { repo, headers }).then((a) => a.json);
}

export interface PushOutcome {
  /** The new head (or the unchanged one) after a 200. */
  readonly commit?: string;
  /** A 304's reason, from its ETag. */
  readonly refusal?: string;
}

const unquote = (etag: string | null) => (etag ?? '').replace(/^W\//, '').replace(/^"|"$/g, '');

/** A change the console makes: a POST named as the console's, whose answer's ETag names the commit. */
const postChange = (repo: RepoRef, path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(path, { repo, method: 'POST', body, headers: { 'Application-Name': 'cfghub-console', ...headers } });

/**
 * A push: 200 with the commit, or 304 with the reason (a refusal changes nothing). `onHead` is the
 * commit its preview was made on: the push is refused if the head has moved since (If-Match), so
 * what is committed is what the preview showed.
 */
export async function pushChanges(repo: RepoRef, body: unknown, onHead?: string): Promise<PushOutcome> {
  const answer = await postChange(
    repo,
    `/rest/push/${repoPath(repo)}`,
    body,
    onHead ? { 'If-Match': `"${onHead}"` } : {},
  );
  if (answer.status === 304) return { refusal: unquote(answer.etag) || 'the push was refused (no reason given)' };
  return { commit: unquote(answer.etag) };
}

/** The same push as a dry run (`Dry-Run: true`): what it would do, context by context; nothing is written. */
export async function previewPush(repo: RepoRef, body: unknown): Promise<DryRunAnswer> {
  return (await postChange(repo, `/rest/push/${repoPath(repo)}`, body, { 'Dry-Run': 'true' })).json as DryRunAnswer;
}

/** A revert of a commit or a restore of a point (tag, commit id or date), with its optional comment. */
export interface Rollback {
  readonly kind: 'revert' | 'restore';
  readonly target: string;
  readonly comment?: string;
}

const rollbackRequest = (repo: RepoRef, rollback: Rollback, headers: Record<string, string>) =>
  postChange(
    repo,
    `/rest/${rollback.kind}/${repoPath(repo)}`,
    {
      ...(rollback.kind === 'revert' ? { commit: rollback.target } : { to: rollback.target }),
      ...(rollback.comment ? { changeComment: rollback.comment } : {}),
    },
    headers,
  );

/**
 * A revert or restore: 200 with the commit it made (a refusal is an ApiError with the server's
 * message). `onHead` is the commit its preview was made on (If-Match), as for a push.
 */
export async function rollback(repo: RepoRef, change: Rollback, onHead?: string): Promise<PushOutcome> {
  const answer = await rollbackRequest(repo, change, onHead ? { 'If-Match': `"${onHead}"` } : {});
  return { commit: unquote(answer.etag) };
}

/** The same revert or restore as a dry run (`Dry-Run: true`): what it would do, context by context; nothing is written. */
export async function previewRollback(repo: RepoRef, change: Rollback): Promise<DryRunAnswer> {
  return (await rollbackRequest(repo, change, { 'Dry-Run': 'true' })).json as DryRunAnswer;
}

// --- change requests (docs/changes.md) ----------------------------------------------------------

export interface ChangeRequestInfo {
  readonly id: number;
  readonly title: string;
  readonly comment?: string;
  readonly author: string;
  readonly status: 'open' | 'applied' | 'closed';
  readonly approvals: readonly { readonly by: string; readonly at: string }[];
  readonly applied?: { readonly by: string; readonly commit: string };
  readonly closed?: { readonly by: string };
  readonly requiredApprovals?: {
    readonly rules: readonly string[];
    readonly needed: number;
    readonly approved: boolean;
  };
  /** What applying it would do on the current head (a dry run). */
  readonly preview?: DryRunAnswer;
}

const changesPath = (repo: RepoRef) => `/rest/changes/${repoPath(repo)}`;

/** Sends the collected changes as a change request instead of a push. */
export async function createChangeRequest(repo: RepoRef, title: string, body: object): Promise<ChangeRequestInfo> {
  return (await postChange(repo, changesPath(repo), { ...body, title })).json as ChangeRequestInfo;
}

export async function listChangeRequests(repo: RepoRef): Promise<ChangeRequestInfo[]> {
  return (await call<{ changes: ChangeRequestInfo[] }>(changesPath(repo), { repo })).json.changes;
}

export async function showChangeRequest(repo: RepoRef, id: number): Promise<ChangeRequestInfo> {
  return (await call<ChangeRequestInfo>(`${changesPath(repo)}/${id}`, { repo })).json;
}

/** Approves, applies or closes a change request; the server's refusal (a conflict, a self-approval) is an ApiError. */
export async function actOnChangeRequest(
  repo: RepoRef,
  id: number,
  action: 'approve' | 'apply' | 'close',
): Promise<void> {
  await postChange(repo, `${changesPath(repo)}/${id}/${action}`, undefined);
}
