/**
 * The answers of the read endpoints (`pull`, `rawFile`, `info`, `keyData`, `export`) as bytes:
 * `{etag, contentType, bytes}`, made once per (repository, commit, query, security groups
 * unlocked) and then served from the read cache (readCache.ts). After a push, a pull of the
 * present whose context the push did not reach is served the answer its group had before (the
 * carry rule: `carry` below, weighed by changeReach.ts), so a push that changes one context of
 * 1,000 polled makes one answer, not 1,000.
 *
 * Transport-free: the HTTP adapter turns headers into a ReadQuery and writes the bytes; a watch
 * (watchHub.ts) asks for the answer of its group at each new head through `answerAt`.
 */
import { parseRequestContext, type Context } from '../../domain/context.js';
import type { PullFormat } from '../../domain/renderings.js';
import type { GitRepository } from '../../disk/repository.js';
import { listTags } from '../../disk/records/tags.js';
import { isoSeconds } from '../../lib/dates.js';
import { telemetry } from '../../lib/telemetry.js';
import { TimeSlices } from '../../lib/timeSlices.js';
import { ServiceError } from '../errors.js';
import { exportBodySteps, infoBodySteps, keyDataBody, pullBodySteps, rawFile, type ReadTarget } from '../read/read.js';
import { readerKeyRing, type KeyRing, type ReaderKeys } from '../security/keyRing.js';
import { jsonAnswer, pullAnswer } from './answerInSlices.js';
import { pullMayDiffer } from './changeReach.js';
import { answerOf, readCacheOfWorker, type Answer, type ReadCache } from './readCache.js';
import { renderedPull } from './renderedPull.js';

/** The read endpoints, by their names in the ConfigHub API. */
export const READ_ENDPOINTS = ['pull', 'rawFile', 'info', 'keyData', 'export'] as const;
export type ReadEndpoint = (typeof READ_ENDPOINTS)[number];

/**
 * What a read asks for besides the repository and the commit: everything that makes its answer,
 * so two equal queries (with the same security groups unlocked) share one answer per commit.
 * `context` is the request's context text as sent (parsed against the levels of the commit read).
 */
export type ReadQuery =
  | {
      readonly endpoint: 'pull';
      readonly format: PullFormat;
      readonly context: string | undefined;
      readonly includeComments: boolean;
      readonly includeValueContext: boolean;
      readonly noProperties: boolean;
      readonly noFiles: boolean;
      readonly pretty: boolean;
    }
  | { readonly endpoint: 'rawFile'; readonly context: string | undefined; readonly file: string | undefined }
  | {
      readonly endpoint: 'info';
      /** Levels whose item names to list: all when true, none when false, or these labels. */
      readonly contextElements: boolean | readonly string[];
      /** Files to list: all when true, none when false, or those matching a glob. */
      readonly files: boolean | string;
      /** Tags listed: tags move without a commit, so such an answer is never kept. */
      readonly tags: boolean;
      readonly pretty: boolean;
    }
  | { readonly endpoint: 'keyData'; readonly keyName: string | undefined; readonly pretty: boolean }
  | {
      readonly endpoint: 'export';
      readonly omitValues: boolean;
      readonly omitFiles: boolean;
      readonly pretty: boolean;
    };

/** A read of one repository: what it asks for, and what the reader offers to open security groups. */
export interface ReadRequest {
  readonly repository: GitRepository;
  readonly query: ReadQuery;
  readonly keys: ReaderKeys;
}

/** An answer, and the key of its group: the same request at any commit (watchers of one group share one answer per head). */
export interface MadeAnswer {
  readonly answer: Answer;
  readonly groupKey: string;
}

function requiredContext(text: string | undefined, target: ReadTarget): Context {
  if (text === undefined) {
    throw new ServiceError(
      'invalid_argument',
      `the Context header is required: one item per level (${target.snapshot.settings.levels.join(';')})`,
    );
  }
  const parsed = parseRequestContext(text, target.snapshot.settings.levels);
  if (!parsed.ok) throw new ServiceError('invalid_argument', parsed.problem);
  return parsed.context;
}

/** The answer of a query at the target's commit, made now. Serialized in slices (answerInSlices.ts): an export of a large repository is megabytes of JSON. */
async function make(query: ReadQuery, target: ReadTarget, generatedOn: string): Promise<Answer> {
  switch (query.endpoint) {
    case 'pull': {
      const context = requiredContext(query.context, target);
      if (query.format !== 'json') return renderedPull(target, context, query.format);
      // Key by key in slices: a pull of a large repository resolves every key of it.
      const slices = new TimeSlices();
      const body = await slices.run(pullBodySteps(target, query.context ?? '', context, query));
      // The ETag is of the content alone: generatedOn varies without it. Made in slices
      // (answerInSlices.ts): the largest allowed answer is 8 Mi characters of files.
      return pullAnswer(body, query.pretty, generatedOn, slices);
    }
    case 'rawFile': {
      if (query.file === undefined)
        throw new ServiceError('invalid_argument', 'the File header is required: the path of the file to read');
      const file = rawFile(target, query.file, requiredContext(query.context, target));
      return answerOf(file.content, file.contentType);
    }
    case 'info': {
      const tags = query.tags ? await listTags(target.repository) : undefined;
      const body = await new TimeSlices().run(
        infoBodySteps(target, { contextElements: query.contextElements, files: query.files, tags }),
      );
      const { account, repository, ...rest } = body;
      return jsonAnswer({ account, repository, generatedOn, ...rest }, query.pretty);
    }
    case 'keyData':
      if (query.keyName === undefined) throw new ServiceError('invalid_argument', 'the KeyName header is required');
      return jsonAnswer(keyDataBody(target, query.keyName), query.pretty);
    case 'export':
      return jsonAnswer(await new TimeSlices().run(exportBodySteps(target, query)), query.pretty);
  }
}

/** Whether an answer depends on the commit alone: tags can move without a commit. */
const cacheable = (query: ReadQuery) => !(query.endpoint === 'info' && query.tags);

/**
 * The carry rule: the answer a group (the same pull at any commit) was last made or served at
 * `last` is its answer at `commitId` too when the changes between them do not reach the pull's
 * context (changeReach.ts). Any doubt (nothing kept, the answer gone from the cache, a failure
 * weighing the changes): undefined, and the answer is made.
 */
export async function carry(
  cache: ReadCache,
  repository: GitRepository,
  commitId: string,
  group: { readonly key: string; readonly context: string },
  keyAt: (commitId: string) => string,
): Promise<Answer | undefined> {
  const last = cache.lastCommitOf(group.key);
  if (last === undefined || last === commitId) return undefined;
  const answer = cache.get(keyAt(last));
  if (!answer) return undefined;
  try {
    return (await pullMayDiffer(repository, last, commitId, group.context)) ? undefined : answer;
  } catch {
    return undefined;
  }
}

/** The read answers of one serving process: its cache, and the one way an answer is got (cached, carried or made). */
export class ReadAnswers {
  /** `cache`: of a process serving one of `serve --workers N`, the server's bound divided among them (readCacheOfWorker). */
  constructor(readonly cache: ReadCache = readCacheOfWorker()) {}

  /**
   * The answer of `request` at `commitId` (a read of the past names its `repoDate`): from the
   * cache, carried from the group's last commit, or made (and kept).
   */
  async answerAt(request: ReadRequest, commitId: string, repoDate?: string): Promise<MadeAnswer> {
    const { repository, query } = request;
    // Answers differ by the security groups the caller unlocked: the key names them (by a hash), never a password.
    const ring: KeyRing = await readerKeyRing(repository, commitId, request.keys);
    const options = [JSON.stringify(query), ring.fingerprint()];
    const keyAt = (at: string) => [repository.gitdir, at, repoDate ?? '', ...options].join('\0');
    const groupKey = [repository.gitdir, ...options].join('\0');
    const made = async () => {
      const target: ReadTarget = {
        repository,
        account: repository.account,
        name: repository.name,
        snapshot: await repository.snapshot(commitId),
        repoDate,
        ring,
      };
      return make(query, target, isoSeconds(new Date()));
    };
    if (!cacheable(query)) return { answer: await made(), groupKey };
    const key = keyAt(commitId);
    let answer = this.cache.get(key);
    if (answer) {
      telemetry.readCache('hit');
      return { answer, groupKey };
    }
    // Only pulls of the present carry: a body of the past names its date, and other endpoints are not weighed.
    const carries = query.endpoint === 'pull' && repoDate === undefined;
    const lastOfGroup = carries ? { key: groupKey, commitId } : undefined;
    const group = { key: groupKey, context: query.endpoint === 'pull' ? (query.context ?? '') : '' };
    if (carries && (answer = await carry(this.cache, repository, commitId, group, keyAt)))
      telemetry.readCache('carried');
    else {
      telemetry.readCache('miss');
      answer = await made();
    }
    this.cache.set(key, answer, lastOfGroup);
    return { answer, groupKey };
  }

  /**
   * For a held read: whether its answer may differ between two heads, or undefined where that
   * cannot be told without making it. A pull's answer is its context's resolved keys and files
   * (in any format): a change of keys resolving for other contexts only leaves it as it was.
   */
  mayDiffer(request: ReadRequest): ((from: string, to: string) => Promise<boolean>) | undefined {
    const { repository, query } = request;
    if (query.endpoint !== 'pull') return undefined;
    const context = query.context ?? '';
    return (from, to) => pullMayDiffer(repository, from, to, context);
  }
}
