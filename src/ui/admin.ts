/**
 * The console's admin side: an admin token (`cfghub admin-token create`, made on the server's
 * host) opens the admin API under /rest/admin, which lists every repository, creates tags and
 * reads and changes the schemas document, through the project's one admin client (AdminClient).
 * It is kept apart from the client-token session (a user may hold both): its own sessionStorage
 * entry, sent only as `Authorization: Bearer` to the admin API, never in a URL and never to the
 * public API.
 */
import type { z } from 'zod';
import type * as s from '../api/admin';
import type { SchemaDocument } from '../domain/schemas';
import { AdminClient } from '../client/admin';
import { consoleFetch, type RepoRef } from './api';
import { storedSession } from './storedSession';

export interface AdminSession {
  readonly kind: 'admin';
  readonly token: string;
}

const stored = storedSession<AdminSession>('cfghub.admin', (a) => a.kind === 'admin' && typeof a.token === 'string');

export const loadAdmin = (): AdminSession | undefined => stored.load();

export const saveAdmin = (admin: AdminSession | undefined): void => stored.save(admin);

export type AdminTag = z.infer<typeof s.tagRecord>;
export type SchemasChange = z.infer<typeof s.schemasChange>;

/** The admin client of a token; a change it makes is named as the console's (`Application-Name`). */
const adminClient = (token: string) =>
  new AdminClient({ server: location.origin, token, fetch: consoleFetch, applicationName: 'cfghub-console' });

const fullName = (repo: RepoRef) => `${repo.account}/${repo.repository}`;

/** Every repository, private ones too, and apart the ones that cannot be read. Also proves the token at sign-in. */
export const adminListing = (token: string) => adminClient(token).listRepositories();

export const adminTags = (admin: AdminSession, repo: RepoRef) => adminClient(admin.token).listTags(fullName(repo));

/** Tags the repository's head: the admin API tags the head only (as `cfghub tag create` does). */
export const createTag = (admin: AdminSession, repo: RepoRef, name: string, comment: string) =>
  adminClient(admin.token).createTag(fullName(repo), { name, ...(comment ? { comment } : {}) });

export const adminRecord = (admin: AdminSession, repo: RepoRef) => adminClient(admin.token).repository(fullName(repo));

export const adminGroups = (admin: AdminSession, repo: RepoRef) => adminClient(admin.token).listGroups(fullName(repo));

/** Who reads what: the read record the server keeps in memory (GET /rest/clients, admin token). */
export const readRecord = async (admin: AdminSession, repo: RepoRef) =>
  (await adminClient(admin.token).readRecord(fullName(repo))).clients;

export const webhooks = (admin: AdminSession, repo: RepoRef) => adminClient(admin.token).listWebhooks(fullName(repo));

export const webhookDeliveries = (admin: AdminSession, repo: RepoRef) =>
  adminClient(admin.token).webhookDeliveries(fullName(repo));

export const redeliver = (admin: AdminSession, repo: RepoRef, delivery: string) =>
  adminClient(admin.token).redeliver(fullName(repo), delivery);

/**
 * The repository's schemas document (schemas.yaml: key schemas, file schemas, context rules), as
 * the console edits it: JSON read from YAML, checked by the server when it is previewed or saved.
 */
export type SchemasDocument = Record<string, unknown>;

/** The document as the client sends it: its shape is the server's to check (a 400 names what is wrong). */
const asSent = (schemas: SchemasDocument) => schemas as unknown as SchemaDocument;

export const adminSchemas = async (admin: AdminSession, repo: RepoRef): Promise<SchemasDocument> =>
  (await adminClient(admin.token).schemas(fullName(repo))).schemas;

/** The schemas change as a dry run (`Dry-Run: true` on the same request): what it would do; nothing written. */
export const previewSchemas = (admin: AdminSession, repo: RepoRef, schemas: SchemasDocument) =>
  adminClient(admin.token).previewSchemas(fullName(repo), { schemas: asSent(schemas) });

/** Replaces the schemas document in one commit; a document existing content breaks is refused (409) listing what breaks. */
export const saveSchemas = (admin: AdminSession, repo: RepoRef, schemas: SchemasDocument, comment: string) =>
  adminClient(admin.token).setSchemas(fullName(repo), {
    schemas: asSent(schemas),
    ...(comment ? { comment } : {}),
  });
