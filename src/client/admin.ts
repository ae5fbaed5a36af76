/**
 * The admin API's client: a server's URL and an admin token (sent as `Authorization: Bearer`), one
 * JSON request per operation, each answer checked against the schema the server describes it with
 * (src/api/admin.ts) and given back as the server sent it. Passwords go only in request bodies.
 * The CLI's remote commands and the web console use it.
 *
 *   const admin = new AdminClient({ server: 'http://127.0.0.1:8080', token: process.env.CFGHUB_ADMIN_TOKEN });
 *   await admin.createTag('acme/app', { name: 'v1' });
 */
import type { z } from 'zod';
import * as s from '../api/admin.js';
import { dryRunSchema } from '../api/answers.js';
import type { SchemaDocument } from '../domain/schemas.js';
import { ClientError, ConnectionError, failureOf, type Fetch } from './errors.js';
import { NO_REDIRECTS, refuseRedirect } from './redirects.js';
import { withoutTrailingSlashes } from '../lib/urls.js';

export interface AdminClientOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:8080` (empty: the page's own server, in a browser). */
  readonly server: string;
  readonly token: string;
  readonly fetch?: Fetch;
  /** Recorded in the commits its changes make as their `Application-Name`. */
  readonly applicationName?: string;
  /** How long one answer may take; none when left out. */
  readonly timeoutMs?: number;
}

type Answer<T extends z.ZodType> = z.output<T>;

/** `ACCOUNT/NAME` as the admin API's path of the repository. */
export function adminRepositoryPath(fullName: string): string {
  const [account, name] = fullName.split('/');
  return `/rest/admin/repositories/${encodeURIComponent(account)}/${encodeURIComponent(name)}`;
}

const webhooksPath = (fullName: string) => `${adminRepositoryPath(fullName)}/webhooks`;
const setPath = (fullName: string, set: string) =>
  `${adminRepositoryPath(fullName)}/rule-sets/${encodeURIComponent(set)}`;
const contextGroupPath = (fullName: string, level: string, group: string) =>
  `${adminRepositoryPath(fullName)}/context-groups/${encodeURIComponent(level)}/${encodeURIComponent(group)}`;

export class AdminClient {
  private readonly base: string;
  private readonly fetcher: Fetch;

  constructor(private readonly options: AdminClientOptions) {
    this.base = withoutTrailingSlashes(options.server);
    this.fetcher = options.fetch ?? fetch;
  }

  /** One request; the answer checked against `schema` and given back as sent. */
  private async call<T extends z.ZodType>(
    schema: T,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer<T>> {
    let response: Response;
    try {
      response = await this.fetcher(`${this.base}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${this.options.token}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...applicationHeader(this.options.applicationName),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        ...(this.options.timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(this.options.timeoutMs) }),
        ...NO_REDIRECTS,
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      throw new ConnectionError(`cannot reach the server at ${this.base}: ${cause}`, { cause: error });
    }
    await refuseRedirect(response, this.base);
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      throw new ConnectionError(
        `the server at ${this.base} answered ${response.status} with something that is not JSON: is it a cfghub server?`,
      );
    }
    if (!response.ok) throw failureOf(response.status, parsed, `the server answered ${response.status}`);
    const checked = schema.safeParse(parsed);
    if (!checked.success)
      throw new ConnectionError(
        `the server's answer to ${method} ${path} is not what cfghub answers: ${checked.error.message}`,
      );
    return parsed as Answer<T>;
  }

  // ---- repositories ----

  listRepositories() {
    return this.call(s.listing, 'GET', '/rest/admin/repositories');
  }

  createRepository(body: z.input<typeof s.newRepositoryBody>) {
    return this.call(s.repositoryRecord, 'POST', '/rest/admin/repositories', body);
  }

  repository(fullName: string) {
    return this.call(s.listingRecord, 'GET', adminRepositoryPath(fullName));
  }

  changeSettings(fullName: string, change: z.input<typeof s.settingsChangeBody>) {
    return this.call(s.listingRecord, 'PATCH', adminRepositoryPath(fullName), change);
  }

  deleteRepository(fullName: string) {
    return this.call(s.deletedRepository, 'DELETE', adminRepositoryPath(fullName));
  }

  // ---- client tokens ----

  createToken(fullName: string, body: z.input<typeof s.newTokenBody>) {
    return this.call(s.createdToken, 'POST', `${adminRepositoryPath(fullName)}/tokens`, body);
  }

  listTokens(fullName: string) {
    return this.call(s.tokenInfo.array(), 'GET', `${adminRepositoryPath(fullName)}/tokens`);
  }

  revokeToken(fullName: string, label: string) {
    return this.call(s.revokedToken, 'DELETE', `${adminRepositoryPath(fullName)}/tokens/${encodeURIComponent(label)}`);
  }

  // ---- tags ----

  createTag(fullName: string, body: z.input<typeof s.newTagBody>) {
    return this.call(s.tagRecord, 'POST', `${adminRepositoryPath(fullName)}/tags`, body);
  }

  listTags(fullName: string) {
    return this.call(s.tagRecord.array(), 'GET', `${adminRepositoryPath(fullName)}/tags`);
  }

  deleteTag(fullName: string, tag: string) {
    return this.call(s.deletedTag, 'DELETE', `${adminRepositoryPath(fullName)}/tags/${encodeURIComponent(tag)}`);
  }

  // ---- security groups ----

  createGroup(fullName: string, body: z.input<typeof s.newGroupBody>) {
    return this.call(s.groupCommit, 'POST', `${adminRepositoryPath(fullName)}/groups`, body);
  }

  listGroups(fullName: string) {
    return this.call(s.groupInfo.array(), 'GET', `${adminRepositoryPath(fullName)}/groups`);
  }

  changePassword(fullName: string, group: string, body: z.input<typeof s.passwordChangeBody>) {
    return this.call(
      s.groupCommit,
      'POST',
      `${adminRepositoryPath(fullName)}/groups/${encodeURIComponent(group)}/password`,
      body,
    );
  }

  deleteGroup(fullName: string, group: string) {
    return this.call(s.deletedGroup, 'DELETE', `${adminRepositoryPath(fullName)}/groups/${encodeURIComponent(group)}`);
  }

  // ---- rollback: `applicationName` is recorded in the commit ----

  revert(fullName: string, body: z.input<typeof s.revertBody>, applicationName?: string) {
    return this.call(
      s.rollbackResult,
      'POST',
      `${adminRepositoryPath(fullName)}/revert`,
      body,
      applicationHeader(applicationName),
    );
  }

  restore(fullName: string, body: z.input<typeof s.restoreBody>, applicationName?: string) {
    return this.call(
      s.rollbackResult,
      'POST',
      `${adminRepositoryPath(fullName)}/restore`,
      body,
      applicationHeader(applicationName),
    );
  }

  /** The revert as a dry run (`Dry-Run: true`): its refusal, or the commit it would make and what each context would read after it. */
  previewRevert(fullName: string, body: z.input<typeof s.revertBody>, contexts: readonly string[] = []) {
    return this.call(dryRunSchema, 'POST', `${adminRepositoryPath(fullName)}/revert`, body, dryRunHeaders(contexts));
  }

  /** The restore as a dry run, as previewRevert. */
  previewRestore(fullName: string, body: z.input<typeof s.restoreBody>, contexts: readonly string[] = []) {
    return this.call(dryRunSchema, 'POST', `${adminRepositoryPath(fullName)}/restore`, body, dryRunHeaders(contexts));
  }

  /** A request to another route of the admin API (`path` from /rest/admin), its JSON answer as sent. */
  request(method: string, path: string, body?: unknown) {
    return this.call(s.anyAnswer, method, path, body);
  }

  // ---- who reads what ----

  /** The read record the serving process keeps in memory: per application and context, the commit last served. */
  readRecord(fullName: string) {
    const [account, name] = fullName.split('/');
    return this.call(
      s.readRecordAnswer,
      'GET',
      `/rest/clients/${encodeURIComponent(account)}/${encodeURIComponent(name)}`,
    );
  }

  // ---- schemas ----

  schemas(fullName: string) {
    return this.call(s.schemasAnswer, 'GET', `${adminRepositoryPath(fullName)}/schemas`);
  }

  setSchemas(fullName: string, body: { readonly schemas: SchemaDocument; readonly comment?: string }) {
    return this.call(s.schemasChange, 'POST', `${adminRepositoryPath(fullName)}/schemas`, body);
  }

  /** The same change as a dry run (`Dry-Run: true`): its refusal listing what breaks, or the commit it would make. */
  previewSchemas(fullName: string, body: { readonly schemas: SchemaDocument }) {
    return this.call(dryRunSchema, 'POST', `${adminRepositoryPath(fullName)}/schemas`, body, { 'Dry-Run': 'true' });
  }

  // ---- access rule sets ----

  listRuleSets(fullName: string) {
    return this.call(s.ruleSet.array(), 'GET', `${adminRepositoryPath(fullName)}/rule-sets`);
  }

  createRuleSet(fullName: string, body: z.input<typeof s.newRuleSetBody>) {
    return this.call(s.ruleSetChange, 'POST', `${adminRepositoryPath(fullName)}/rule-sets`, body);
  }

  setRuleSetSwitches(fullName: string, set: string, switches: z.input<typeof s.ruleSetSwitchesBody>) {
    return this.call(s.ruleSetChange, 'PATCH', setPath(fullName, set), switches);
  }

  deleteRuleSet(fullName: string, set: string) {
    return this.call(s.commitOnly, 'DELETE', setPath(fullName, set));
  }

  addRule(fullName: string, set: string, rule: z.input<typeof s.newRuleBody>) {
    return this.call(s.ruleSetChange, 'POST', `${setPath(fullName, set)}/rules`, rule);
  }

  moveRule(fullName: string, set: string, from: number, to: number) {
    return this.call(s.ruleSetChange, 'POST', `${setPath(fullName, set)}/rules/${from}/move`, { to });
  }

  deleteRule(fullName: string, set: string, priority: number) {
    return this.call(s.ruleSetChange, 'DELETE', `${setPath(fullName, set)}/rules/${priority}`);
  }

  // ---- context groups ----

  listContextGroups(fullName: string) {
    return this.call(s.contextGroup.array(), 'GET', `${adminRepositoryPath(fullName)}/context-groups`);
  }

  createContextGroup(fullName: string, body: z.input<typeof s.newContextGroupBody>) {
    return this.call(s.commitOnly, 'POST', `${adminRepositoryPath(fullName)}/context-groups`, body);
  }

  addGroupMember(fullName: string, level: string, group: string, member: string) {
    return this.call(s.commitOnly, 'POST', `${contextGroupPath(fullName, level, group)}/members`, { member });
  }

  removeGroupMember(fullName: string, level: string, group: string, member: string) {
    return this.call(
      s.commitOnly,
      'DELETE',
      `${contextGroupPath(fullName, level, group)}/members/${encodeURIComponent(member)}`,
    );
  }

  deleteContextGroup(fullName: string, level: string, group: string) {
    return this.call(s.commitOnly, 'DELETE', contextGroupPath(fullName, level, group));
  }

  // ---- webhooks (the deliveries and their log are the serving process's) ----

  addWebhook(fullName: string, body: z.input<typeof s.newWebhookBody>) {
    return this.call(s.webhookInfo, 'POST', webhooksPath(fullName), body);
  }

  listWebhooks(fullName: string) {
    return this.call(s.webhookInfo.array(), 'GET', webhooksPath(fullName));
  }

  removeWebhook(fullName: string, id: string) {
    return this.call(s.webhookInfo, 'DELETE', `${webhooksPath(fullName)}/${encodeURIComponent(id)}`);
  }

  webhookDeliveries(fullName: string) {
    return this.call(s.deliveryRecord.array(), 'GET', `${webhooksPath(fullName)}/deliveries`);
  }

  redeliver(fullName: string, delivery: string) {
    return this.call(
      s.deliveryRecord,
      'POST',
      `${webhooksPath(fullName)}/deliveries/${encodeURIComponent(delivery)}/redeliver`,
    );
  }

  // ---- replication tokens ----

  createReplicationToken(body: z.input<typeof s.newReplicationTokenBody>) {
    return this.call(s.createdReplicationToken, 'POST', '/rest/admin/replication-tokens', body);
  }

  revokeReplicationToken(label: string) {
    return this.call(
      s.revokedReplicationToken,
      'DELETE',
      `/rest/admin/replication-tokens/${encodeURIComponent(label)}`,
    );
  }
}

/** A dry run's headers: `Dry-Run`, and the contexts to weigh besides the named ones. */
function dryRunHeaders(contexts: readonly string[]): Record<string, string> {
  return { 'Dry-Run': 'true', ...(contexts.length ? { 'Dry-Run-Contexts': contexts.join(',') } : {}) };
}

function applicationHeader(applicationName: string | undefined): Record<string, string> {
  return applicationName ? { 'Application-Name': applicationName } : {};
}

export { ClientError, ConnectionError };
