/**
 * Answers of the read endpoints, serialised once per (repository, commit, endpoint, options) and
 * served as bytes with a precomputed ETag. Keyed by commit id, so an entry can never be stale: a
 * push makes a new commit, hence a new key (whose answer may be the one before, carried over
 * where the push did not reach it: answers.ts). Bounded in entries and in bytes (large
 * exports), least recently used first out.
 */
import { createHash } from 'node:crypto';
import { ownBytes } from '../../lib/ownCopies.js';

/** An answer of a read as the transport sends it. */
export interface Answer {
  /** The encoded body, sent as it is: no string is encoded again per request. */
  readonly bytes: Buffer;
  /** The Content-Type header, with its charset: every answer is UTF-8 text. */
  readonly contentType: string;
  /** A strong ETag: the quoted SHA-1 of the body, or of `content` when the body holds more than its content. */
  readonly etag: string;
}

/**
 * `content`: what the ETag is made of when the body carries more than the content (a pull's
 * `generatedOn`), so the same content always has the same ETag, whichever commit or process made
 * it (the ETag is a watch's cursor).
 */
export function answerOf(text: string, mediaType: string, content = text): Answer {
  return {
    bytes: Buffer.from(text, 'utf8'),
    contentType: `${mediaType}; charset=utf-8`,
    etag: `"${createHash('sha1').update(mediaType).update('\0').update(content).digest('hex')}"`,
  };
}

/** The read cache's bound for the whole server: answers, and their bytes. */
export const READ_CACHE_ENTRIES = 1000;
export const READ_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * The cache of one process serving `workers` of the server's processes: the server's
 * bound divided among them, so `serve --workers N` holds no more answers in all than one process.
 */
export function readCacheOfWorker(workers = 1): ReadCache {
  return new ReadCache(Math.ceil(READ_CACHE_ENTRIES / workers), Math.floor(READ_CACHE_BYTES / workers));
}

export class ReadCache {
  private readonly entries = new Map<string, Answer>();
  private bytes = 0;
  /**
   * The commit each group of like answers (the same request at any commit) was last answered at,
   * so that the next commit can be told whether it reaches that answer (answers.ts). Commit ids
   * only, as many groups as answers: the answers themselves stay within the bounds above.
   */
  private readonly lastCommits = new Map<string, string>();

  constructor(
    private readonly capacity = READ_CACHE_ENTRIES,
    private readonly maxBytes = READ_CACHE_BYTES,
  ) {}

  get(key: string): Answer | undefined {
    const answer = this.entries.get(key);
    if (answer) {
      this.entries.delete(key);
      this.entries.set(key, answer);
    }
    return answer;
  }

  /** The commit `group` was last answered at (see set's `group`). */
  lastCommitOf(group: string): string | undefined {
    return this.lastCommits.get(group);
  }

  /** `group` and `commitId`, where given, note the commit the group was last answered at. */
  set(key: string, answer: Answer, group?: { readonly key: string; readonly commitId: string }): void {
    if (group) {
      this.lastCommits.delete(group.key);
      this.lastCommits.set(group.key, group.commitId);
      if (this.lastCommits.size > this.capacity) this.lastCommits.delete(this.lastCommits.keys().next().value!);
    }
    this.remove(key);
    if (answer.bytes.length > this.maxBytes) return;
    // A small answer's bytes may be a view into a shared pool slab, which they would keep whole.
    this.entries.set(key, { ...answer, bytes: ownBytes(answer.bytes) });
    this.bytes += answer.bytes.length;
    while (this.entries.size > this.capacity || this.bytes > this.maxBytes)
      this.remove(this.entries.keys().next().value!);
  }

  private remove(key: string): void {
    const answer = this.entries.get(key);
    if (!answer) return;
    this.entries.delete(key);
    this.bytes -= answer.bytes.length;
  }
}
