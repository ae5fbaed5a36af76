/**
 * The TypeScript client of a cfghub server: `import { Client } from 'cfghub/client'`.
 *
 *   const client = new Client({ server: 'http://127.0.0.1:8080', token: process.env.CFGHUB_TOKEN });
 *   const { body } = await client.pull('acme/app', { context: 'Production;web;node1' });
 *   for await (const answer of client.watch('acme/app', { context: 'Production;web;node1' })) apply(answer.body);
 *   await client.push('acme/app').set('db.host', 'db2', { context: 'Production;*;*' }).send('Move the database');
 *
 * Every body and answer has one definition, in src/api: push bodies are typed from the schemas
 * the server checks them with and checked with them before they are sent; answers are checked
 * against the schemas the server builds them with. The admin API's client is AdminClient
 * (admin.ts). Needs only `fetch` (Node 18 and later, a browser, or any fetch passed in).
 */
import { parsePushBody, type PushBodyInput, type PushFileInput, type PushKeyInput } from '../api/pushBody.js';
import {
  appliedChangeSchema,
  changeListSchema,
  changeRequestSchema,
  type ChangeRequestAnswer,
  diffSchema,
  dryRunSchema,
  explainAnswerSchema,
  exportAnswerSchema,
  historySchema,
  infoAnswerSchema,
  pullAnswerSchema,
  type DiffAnswer,
  type DryRunAnswer,
  type ExplainAnswer,
  type ExportAnswer,
  type HistoryAnswer,
  type InfoAnswer,
  type PullAnswerBody,
} from '../api/answers.js';
import type { z } from 'zod';
import { repositoryRecord } from '../api/admin.js';
import type { PullFormat } from '../domain/renderings.js';
import { backOff, type BackOff } from './backOff.js';
import { ClientError, ConnectionError, failureOf, PushRefusedError, type Fetch } from './errors.js';
import { NO_REDIRECTS, refuseRedirect } from './redirects.js';
import { withoutTrailingSlashes } from '../lib/urls.js';

export type * from '../api/answers.js';
export type { PushBodyInput, PushFileInput, PushKeyInput, PushValueInput } from '../api/pushBody.js';
export type { PullFormat } from '../domain/renderings.js';
export { ClientError, ConnectionError, PushRefusedError, RedirectRefusedError, type Fetch } from './errors.js';
export { AdminClient, type AdminClientOptions } from './admin.js';

/** A pull's parsed answer (the json format). */
export type PullBody = PullAnswerBody;

export interface ClientOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:8080`. */
  readonly server: string;
  /** A client token of the repositories read or written; left out for token-free repositories. */
  readonly token?: string;
  /** Recorded in commits as the `Application-Name`. */
  readonly applicationName?: string;
  readonly fetch?: Fetch;
}

export interface PullOptions {
  /** One item per context level, separated by `;`. */
  readonly context: string;
  /** json (default, parsed into `body`), yaml, properties or env (`text` only). */
  readonly format?: PullFormat;
  readonly includeComments?: boolean;
  readonly includeValueContext?: boolean;
  /** Read at a tag, or at the last commit at or before an ISO 8601 date. */
  readonly tag?: string;
  readonly date?: string;
  /** Passwords of security groups, by group name. */
  readonly groupPasswords?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

export interface PullAnswer {
  /** The content-derived ETag: the cursor of a watch. */
  readonly etag: string;
  /** The answer as text (the rendering asked for). */
  readonly text: string;
  /** The parsed answer, for the json format. */
  readonly body?: PullBody;
}

export interface WatchOptions extends Omit<PullOptions, 'tag' | 'date'> {
  /** Seconds a request is held by the server (1–300); 60 by default. */
  readonly waitSeconds?: number;
  /** The ETag of the answer the caller already holds: the first answer is then the next change. */
  readonly etag?: string;
  /** Delays between tries when the server cannot be reached (doubling, with jitter). */
  readonly backOff?: Partial<BackOff>;
  /** Told about each failed try before the pause: the error, and the pause in ms. */
  readonly onRetry?: (error: Error, delayMs: number) => void;
}

export interface PushResult {
  /** The new commit; the head, unchanged, when the push changed nothing. */
  readonly commit: string;
}

export interface DryRunOptions {
  /** Contexts to weigh besides those the repository names: one item per level each. */
  readonly contexts?: readonly string[];
}

/** A revert of a commit or a restore of a point (tag, commit id or date), with its optional comment. */
export interface Rollback {
  readonly kind: 'revert' | 'restore';
  readonly target: string;
  readonly comment?: string;
}

export interface RollbackOptions {
  readonly comment?: string;
  /** The commit the head must be (If-Match): refused with 412 otherwise. */
  readonly ifHead?: string;
}

export interface InfoOptions {
  /** The items of each level. */
  readonly contextElements?: boolean;
  readonly files?: boolean;
  readonly tags?: boolean;
}

export interface ValueOptions {
  /** One item per level, `*` for any. */
  readonly context: string;
}

/** Collects the elements of one push (one commit), then sends them. */
export class PushBuilder {
  private readonly data: (PushKeyInput | PushFileInput)[] = [];

  constructor(
    private readonly client: Client,
    private readonly repository: string,
  ) {}

  /** Sets a key's value for a context (creates the key when needed); `type` is its value data type. */
  set(key: string, value: unknown, options: ValueOptions & { type?: string; readme?: string; active?: boolean }): this {
    this.data.push({
      key,
      ...(options.type !== undefined ? { vdt: options.type } : {}),
      ...(options.readme !== undefined ? { readme: options.readme } : {}),
      values: [
        { context: options.context, value, ...(options.active !== undefined ? { active: options.active } : {}) },
      ],
    });
    return this;
  }

  /** Removes a key's value for a context (the key stays). */
  unset(key: string, options: ValueOptions): this {
    this.data.push({ key, values: [{ context: options.context, opp: 'delete' }] });
    return this;
  }

  /** Deletes a key with all its values. */
  deleteKey(key: string): this {
    this.data.push({ key, opp: 'delete' });
    return this;
  }

  file(path: string, content: string, options: ValueOptions): this {
    this.data.push({ file: path, context: options.context, content });
    return this;
  }

  /** Any element, as the push API takes it. */
  element(element: PushKeyInput | PushFileInput): this {
    this.data.push(element);
    return this;
  }

  send(comment: string, options: { ifHead?: string } = {}): Promise<PushResult> {
    return this.client.pushBody(this.repository, this.body(comment), options);
  }

  /** What `send` would do, context by context, writing nothing (`Dry-Run: true`). */
  dryRun(comment: string, options: DryRunOptions = {}): Promise<DryRunAnswer> {
    return this.client.dryRunBody(this.repository, this.body(comment), options);
  }

  private body(comment: string): PushBodyInput {
    return { changeComment: comment, enableKeyCreation: true, data: this.data };
  }
}

function checkedPushBody(body: PushBodyInput): void {
  const parsed = parsePushBody(body);
  if (!parsed.ok)
    throw new ClientError(0, 'invalid_argument', parsed.problems.map((p) => `${p.path}: ${p.message}`).join('; '));
}

function repositoryPath(repository: string): string {
  const parts = repository.split('/');
  if (parts.length !== 2 || !parts[0] || !parts[1])
    throw new ClientError(0, 'invalid_argument', `a repository is ACCOUNT/NAME, got ${JSON.stringify(repository)}`);
  return parts.map(encodeURIComponent).join('/');
}

const ACCEPT: Record<PullFormat, string> = {
  json: 'application/json',
  yaml: 'application/x-yaml',
  properties: 'text/x-java-properties',
  env: 'text/plain',
};

/** An ETag's value: a commit id, or a refusal's reason. */
const unquote = (etag: string | null) => (etag ?? '').replace(/^W\//, '').replace(/^"|"$/g, '');

const repositoryRecordsSchema = repositoryRecord.array();

/** A repository's record, as the listings give it. */
export type RepositoryRecord = z.infer<typeof repositoryRecord>;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

export class Client {
  private readonly base: string;
  private readonly fetcher: Fetch;

  constructor(private readonly options: ClientOptions) {
    this.base = withoutTrailingSlashes(options.server);
    this.fetcher = options.fetch ?? fetch;
  }

  private async request(
    method: string,
    path: string,
    headers: Record<string, string | undefined>,
    body?: string,
    signal?: AbortSignal,
  ): Promise<Response> {
    const all: Record<string, string> = {};
    for (const [name, value] of Object.entries({
      'Client-Token': this.options.token,
      'Application-Name': this.options.applicationName,
      ...headers,
    })) {
      if (value !== undefined && value !== '') all[name] = value;
    }
    let response: Response;
    try {
      response = await this.fetcher(`${this.base}${path}`, { method, headers: all, body, signal, ...NO_REDIRECTS });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new ConnectionError(
        `cannot reach ${this.base}: ${(error as Error & { cause?: Error }).cause?.message ?? (error as Error).message}`,
        { cause: error },
      );
    }
    await refuseRedirect(response, this.base);
    return response;
  }

  private async failure(response: Response): Promise<ClientError> {
    const text = await response.text().catch(() => '');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return failureOf(response.status, parsed, `the server answered ${response.status} ${response.statusText}`.trim());
  }

  private async json<T>(
    response: Response,
    schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: { message: string } } },
  ): Promise<T> {
    if (!response.ok) throw await this.failure(response);
    const parsed = schema.safeParse(await response.json().catch(() => undefined));
    if (!parsed.success)
      throw new ConnectionError(`the server's answer is not what cfghub answers: ${parsed.error.message}`);
    return parsed.data;
  }

  private pullHeaders(options: PullOptions): Record<string, string | undefined> {
    return {
      Context: options.context,
      Accept: ACCEPT[options.format ?? 'json'],
      'Include-Comments': options.includeComments ? 'true' : undefined,
      'Include-Value-Context': options.includeValueContext ? 'true' : undefined,
      Tag: options.tag,
      'Repository-Date': options.date,
      'Security-Profile-Auth': options.groupPasswords ? JSON.stringify(options.groupPasswords) : undefined,
    };
  }

  private async pullAnswer(response: Response, format: PullFormat): Promise<PullAnswer> {
    const text = await response.text();
    const etag = response.headers.get('etag') ?? '';
    if (format !== 'json') return { etag, text };
    const parsed = pullAnswerSchema.safeParse(JSON.parse(text));
    if (!parsed.success)
      throw new ConnectionError(`the server's pull answer is not what cfghub answers: ${parsed.error.message}`);
    return { etag, text, body: parsed.data };
  }

  /** The resolved configuration of a context. */
  async pull(repository: string, options: PullOptions): Promise<PullAnswer> {
    const response = await this.request(
      'GET',
      `/rest/pull/${repositoryPath(repository)}`,
      this.pullHeaders(options),
      undefined,
      options.signal,
    );
    if (!response.ok) throw await this.failure(response);
    return this.pullAnswer(response, options.format ?? 'json');
  }

  /**
   * Every new answer of a context, as long as the caller iterates: the first at once (unless
   * `etag` says the caller has it), then each change, held by the server (`Wait`) in between.
   * When the server cannot be reached, or restarts, it tries again with back-off and then asks
   * with the last ETag it gave: the ETag depends on the content only, so whatever changed in
   * the meantime comes at once, and nothing that did not change comes twice. Errors the server
   * answers with (401, 403, 404, 400) end the iteration by throwing; so does aborting `signal`.
   */
  async *watch(repository: string, options: WatchOptions): AsyncGenerator<PullAnswer, void, undefined> {
    const path = `/rest/pull/${repositoryPath(repository)}`;
    const pauses = backOff(options.backOff);
    const format = options.format ?? 'json';
    let etag = options.etag;
    while (!options.signal?.aborted) {
      let answer: PullAnswer | undefined;
      try {
        const headers = {
          ...this.pullHeaders(options),
          'If-None-Match': etag,
          Wait: etag ? String(options.waitSeconds ?? 60) : undefined,
        };
        const response = await this.request('GET', path, headers, undefined, options.signal);
        if (response.status === 304) {
          await response.arrayBuffer();
          pauses.reset();
          continue;
        }
        if (!response.ok) {
          const error = await this.failure(response);
          if (response.status < 500 && response.status !== 429) throw error;
          throw new ConnectionError(error.message);
        }
        answer = await this.pullAnswer(response, format);
        pauses.reset();
      } catch (error) {
        if (options.signal?.aborted) return;
        if (!(error instanceof ConnectionError)) throw error;
        const delay = pauses.next();
        options.onRetry?.(error, delay);
        await sleep(delay, options.signal);
        continue;
      }
      etag = answer.etag;
      yield answer;
    }
  }

  /** Starts a push: add elements, then `send(comment)`. */
  push(repository: string): PushBuilder {
    return new PushBuilder(this, repository);
  }

  /** Sends a whole push body; checked first with the server's own schema. */
  async pushBody(repository: string, body: PushBodyInput, options: { ifHead?: string } = {}): Promise<PushResult> {
    checkedPushBody(body);
    const response = await this.request(
      'POST',
      `/rest/push/${repositoryPath(repository)}`,
      { 'Content-Type': 'application/json', 'If-Match': options.ifHead ? `"${options.ifHead}"` : undefined },
      JSON.stringify(body),
    );
    const etag = unquote(response.headers.get('etag'));
    if (response.status === 304) throw new PushRefusedError(etag || 'the push was refused');
    if (!response.ok) throw await this.failure(response);
    await response.arrayBuffer();
    return { commit: etag };
  }

  /**
   * What a push body would do, writing nothing: whether it would commit (or its refusal), and
   * for each context whose answer would change, the keys and rendered files before and after.
   */
  async dryRunBody(repository: string, body: PushBodyInput, options: DryRunOptions = {}): Promise<DryRunAnswer> {
    checkedPushBody(body);
    const response = await this.request(
      'POST',
      `/rest/push/${repositoryPath(repository)}`,
      {
        'Content-Type': 'application/json',
        'Dry-Run': 'true',
        'Dry-Run-Contexts': options.contexts?.length ? options.contexts.join(',') : undefined,
      },
      JSON.stringify(body),
    );
    return this.json(response, dryRunSchema);
  }

  /** Commits, newest first, with what each changed; `key` or `file` keeps those that touched it. */
  async history(
    repository: string,
    options: { key?: string; file?: string; limit?: number; before?: string } = {},
  ): Promise<HistoryAnswer> {
    const response = await this.request('GET', `/rest/history/${repositoryPath(repository)}`, {
      Key: options.key,
      File: options.file,
      Limit: options.limit === undefined ? undefined : String(options.limit),
      Before: options.before,
    });
    return this.json(response, historySchema);
  }

  /** What changed between two points (commit, tag or date; `to` defaults to the head), and for a context what it resolves to. */
  async diff(repository: string, from: string, options: { to?: string; context?: string } = {}): Promise<DiffAnswer> {
    const response = await this.request('GET', `/rest/diff/${repositoryPath(repository)}`, {
      From: from,
      To: options.to,
      Context: options.context,
    });
    return this.json(response, diffSchema);
  }

  /** Every key with all its values (and files unless left out), as `export` gives them. */
  async export(repository: string, options: { omitFiles?: boolean; omitValues?: boolean } = {}): Promise<ExportAnswer> {
    const response = await this.request('GET', `/rest/export/${repositoryPath(repository)}`, {
      'Omit-Files': options.omitFiles ? 'true' : undefined,
      'Omit-Values': options.omitValues ? 'true' : undefined,
    });
    return this.json(response, exportAnswerSchema);
  }

  /** The records of every repository the token may see (`/rest/info/all`). */
  async listRepositories(): Promise<RepositoryRecord[]> {
    return this.json(await this.request('GET', '/rest/info/all', {}), repositoryRecordsSchema);
  }

  /**
   * What a repository holds: its levels and, when asked, the items of each level, its files and
   * its tags. Without a repository, that of the client's token (whose answer names it).
   */
  async info(repository: string | undefined, options: InfoOptions = {}): Promise<InfoAnswer> {
    return (await this.infoAtHead(repository, options)).info;
  }

  /** `info`, with the commit it was read at (its `Commit` header) when the server names one. */
  async infoAtHead(
    repository: string | undefined,
    options: InfoOptions = {},
  ): Promise<{ info: InfoAnswer; head?: string }> {
    const path = repository === undefined ? '/rest/info' : `/rest/info/${repositoryPath(repository)}`;
    const flag = (on: boolean | undefined) => (on ? 'true' : undefined);
    const response = await this.request('GET', path, {
      'Context-Elements': flag(options.contextElements),
      Files: flag(options.files),
      Tags: flag(options.tags),
    });
    const info = await this.json(response, infoAnswerSchema);
    return { info, head: response.headers.get('commit') ?? undefined };
  }

  /** Which value of a key wins for a context and why; with a token, whether that token could change it. */
  async explain(repository: string, key: string, context: string): Promise<ExplainAnswer> {
    return this.json(
      await this.request('GET', `/rest/explain/${repositoryPath(repository)}`, { KeyName: key, Context: context }),
      explainAnswerSchema,
    );
  }

  /**
   * A new commit that undoes one commit; the head, unchanged, when nothing is left to undo.
   * `ifHead`: refused (412) unless the head is that commit, as a push's If-Match.
   */
  revert(repository: string, commit: string, options: RollbackOptions = {}): Promise<PushResult> {
    return this.rolledBack({ kind: 'revert', target: commit, comment: options.comment }, repository, options);
  }

  /** A new commit whose keys and files equal those of a point (commit id, tag or ISO 8601 date). */
  restore(repository: string, to: string, options: RollbackOptions = {}): Promise<PushResult> {
    return this.rolledBack({ kind: 'restore', target: to, comment: options.comment }, repository, options);
  }

  /** A revert or restore made: the commit (the head, unchanged, when there was nothing to change). */
  private async rolledBack(rollback: Rollback, repository: string, options: RollbackOptions): Promise<PushResult> {
    const response = await this.rollback(rollback, repository, {
      'If-Match': options.ifHead ? `"${options.ifHead}"` : undefined,
    });
    if (!response.ok) throw await this.failure(response);
    await response.arrayBuffer();
    return { commit: unquote(response.headers.get('etag')) };
  }

  /** What a revert or restore would do, writing nothing (`Dry-Run: true`), as a push's dry run answers. */
  async dryRunRollback(repository: string, rollback: Rollback, options: DryRunOptions = {}): Promise<DryRunAnswer> {
    const response = await this.rollback(rollback, repository, {
      'Dry-Run': 'true',
      'Dry-Run-Contexts': options.contexts?.length ? options.contexts.join(',') : undefined,
    });
    return this.json(response, dryRunSchema);
  }

  private rollback(
    rollback: Rollback,
    repository: string,
    headers: Record<string, string | undefined>,
  ): Promise<Response> {
    const body = {
      ...(rollback.kind === 'revert' ? { commit: rollback.target } : { to: rollback.target }),
      ...(rollback.comment ? { changeComment: rollback.comment } : {}),
    };
    return this.request(
      'POST',
      `/rest/${rollback.kind}/${repositoryPath(repository)}`,
      { 'Content-Type': 'application/json', ...headers },
      JSON.stringify(body),
    );
  }

  /** Stores a push body as a change request (docs/changes.md); checked first with the server's own schema. */
  async createChange(repository: string, title: string, body: PushBodyInput): Promise<ChangeRequestAnswer> {
    const parsed = parsePushBody(body);
    if (!parsed.ok)
      throw new ClientError(0, 'invalid_argument', parsed.problems.map((p) => `${p.path}: ${p.message}`).join('; '));
    const response = await this.request(
      'POST',
      `/rest/changes/${repositoryPath(repository)}`,
      { 'Content-Type': 'application/json' },
      JSON.stringify({ ...body, title }),
    );
    return this.json(response, changeRequestSchema);
  }

  /** A revert of a commit, or a restore of a commit, tag or date, kept as a change request to be approved and applied. */
  async createRollbackChange(
    repository: string,
    title: string,
    rollback: { readonly revert: string } | { readonly restore: string },
    comment?: string,
  ): Promise<ChangeRequestAnswer> {
    const response = await this.request(
      'POST',
      `/rest/changes/${repositoryPath(repository)}`,
      { 'Content-Type': 'application/json' },
      JSON.stringify({ title, ...rollback, ...(comment ? { changeComment: comment } : {}) }),
    );
    return this.json(response, changeRequestSchema);
  }

  /** The change requests, newest first; `status` keeps those open, applied or closed. */
  async listChanges(repository: string, status?: string): Promise<ChangeRequestAnswer[]> {
    const query = status ? `?status=${encodeURIComponent(status)}` : '';
    const response = await this.request('GET', `/rest/changes/${repositoryPath(repository)}${query}`, {});
    return (await this.json(response, changeListSchema)).changes;
  }

  /** One change request, with what applying it would do on the current head. */
  async showChange(repository: string, id: number): Promise<ChangeRequestAnswer> {
    const response = await this.request('GET', `/rest/changes/${repositoryPath(repository)}/${id}`, {});
    return this.json(response, changeRequestSchema);
  }

  /** Approves or closes a change request. */
  async reviewChange(repository: string, id: number, action: 'approve' | 'close'): Promise<ChangeRequestAnswer> {
    const response = await this.request('POST', `/rest/changes/${repositoryPath(repository)}/${id}/${action}`, {});
    return this.json(response, changeRequestSchema);
  }

  /** Applies a change request; the answer names the new commit. */
  async applyChange(repository: string, id: number): Promise<{ change: ChangeRequestAnswer; commit: string }> {
    const response = await this.request('POST', `/rest/changes/${repositoryPath(repository)}/${id}/apply`, {});
    return this.json(response, appliedChangeSchema);
  }
}
