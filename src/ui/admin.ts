/**
 * The console's admin side: an admin token (`cfghub admin-token create`, made on the server's
 * host) opens the admin API under /rest/admin, which lists every repository, creates tags and
 * reads and changes the schemas document.
 * It is kept apart from the client-token session (a user may hold both): its own sessionStorage
 * entry, sent only as `Authorization: Bearer` to /rest/admin, never in a URL and never to the
 * public API.
 */
import { call, type DryRunAnswer, type RepoRef, type RepositoryRecord } from './api';
import { storedSession } from './storedSession';

export interface AdminSession {
  readonly kind: 'admin';
  readonly token: string;
}

const stored = storedSession<AdminSession>('cfghub.admin', (a) => a.kind === 'admin' && typeof a.token === 'string');

export const loadAdmin = (): AdminSession | undefined => stored.load();

export const saveAdmin = (admin: AdminSession | undefined): void => stored.save(admin);

const adminPath = (repo: RepoRef) =>
  `/rest/admin/repositories/${encodeURIComponent(repo.account)}/${encodeURIComponent(repo.repository)}`;

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

export interface UnreadableRecord {
  account: string;
  name: string;
  error: string;
  message: string;
}

export interface AdminListing {
  records: RepositoryRecord[];
  unreadable: UnreadableRecord[];
}

/** Every repository, private ones too, and apart the ones that cannot be read. Also proves the token at sign-in. */
export const adminListing = (token: string) =>
  call<AdminListing>('/rest/admin/repositories', { headers: bearer(token) }).then((a) => a.json);

export interface AdminTag {
  name: string;
  commitId: string;
  created: string;
  message: string;
}

export const adminTags = (admin: AdminSession, repo: RepoRef) =>
  call<AdminTag[]>(`${adminPath(repo)}/tags`, { headers: bearer(admin.token) }).then((a) => a.json);

/** Tags the repository's head: the admin API tags the head only (as `cfghub tag create` does). */
export const createTag = (admin: AdminSession, repo: RepoRef, name: string, comment: string) =>
  call<AdminTag>(`${adminPath(repo)}/tags`, {
    method: 'POST',
    headers: bearer(admin.token),
    body: { name, ...(comment ? { comment } : {}) },
  }).then((a) => a.json);

export const adminRecord = (admin: AdminSession, repo: RepoRef) =>
  call<RepositoryRecord | UnreadableRecord>(adminPath(repo), { headers: bearer(admin.token) }).then((a) => a.json);

export interface AdminGroup {
  name: string;
  keys: number;
  files: number;
}

export const adminGroups = (admin: AdminSession, repo: RepoRef) =>
  call<AdminGroup[]>(`${adminPath(repo)}/groups`, { headers: bearer(admin.token) }).then((a) => a.json);

export interface ReadRecordEntry {
  application: string;
  context: string;
  commit: string;
  lastRead: string;
  reads: number;
}

/** Who reads what: the read record the server keeps in memory (GET /rest/clients, admin token). */
export const readRecord = (admin: AdminSession, repo: RepoRef) =>
  call<{ repository: string; clients: ReadRecordEntry[] }>(
    `/rest/clients/${encodeURIComponent(repo.account)}/${encodeURIComponent(repo.repository)}`,
    { headers: bearer(admin.token) },
  ).then((a) => a.json.clients);

export interface WebhookInfo {
  id: string;
  url: string;
  created: string;
}

export interface WebhookDelivery {
  id: string;
  hook: string;
  commit: string;
  status: string;
  attempts: number;
  lastStatus?: number;
  lastError?: string;
  created: string;
  nextAttempt?: string;
  redeliveryOf?: string;
}

const hooksPath = (repo: RepoRef) => `${adminPath(repo)}/webhooks`;

export const webhooks = (admin: AdminSession, repo: RepoRef) =>
  call<WebhookInfo[]>(hooksPath(repo), { headers: bearer(admin.token) }).then((a) => a.json);

export const webhookDeliveries = (admin: AdminSession, repo: RepoRef) =>
  call<WebhookDelivery[]>(`${hooksPath(repo)}/deliveries`, { headers: bearer(admin.token) }).then((a) => a.json);

export const redeliver = (admin: AdminSession, repo: RepoRef, delivery: string) =>
  call<WebhookDelivery>(`${hooksPath(repo)}/deliveries/${encodeURIComponent(delivery)}/redeliver`, {
    method: 'POST',
    headers: bearer(admin.token),
  }).then((a) => a.json);

/** The repository's schemas document (schemas.yaml: key schemas, file schemas, context rules), as JSON. */
export type SchemasDocument = Record<string, unknown>;

const schemasPath = (repo: RepoRef) => `${adminPath(repo)}/schemas`;

export const adminSchemas = (admin: AdminSession, repo: RepoRef) =>
  call<{ schemas: SchemasDocument }>(schemasPath(repo), { headers: bearer(admin.token) }).then((a) => a.json.schemas);

/** The schemas change as a dry run (`Dry-Run: true` on the same request): what it would do; nothing written. */
export const previewSchemas = (admin: AdminSession, repo: RepoRef, schemas: SchemasDocument) =>
  call<DryRunAnswer>(schemasPath(repo), {
    method: 'POST',
    headers: { ...bearer(admin.token), 'Dry-Run': 'true' },
    body: { schemas },
  }).then((a) => a.json);

/** Replaces the schemas document in one commit; a document existing content breaks is refused (409) listing what breaks. */
export interface SchemasChange {
  commit: string;
  outcome: 'applied' | 'unchanged';
}

export const saveSchemas = (admin: AdminSession, repo: RepoRef, schemas: SchemasDocument, comment: string) =>
  call<SchemasChange>(schemasPath(repo), {
    method: 'POST',
    headers: { ...bearer(admin.token), 'Application-Name': 'cfghub-console' },
    body: { schemas, ...(comment ? { comment } : {}) },
  }).then((a) => a.json);
