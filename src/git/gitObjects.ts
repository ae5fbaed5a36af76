/**
 * Git's object encoding: the wrapped form `<type> <size>\0<content>`, SHA-1 ids, and the tree and
 * commit formats. Hashing and deflating use Node's crypto and zlib, which are 2 to 10 times faster
 * than isomorphic-git's browser streams (measured when isomorphic-git was replaced; see the
 * README's "Dependencies, and why").
 */
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { ObjectFormatError } from './errors.js';
import { sha1Hex } from './sha1.js';

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag';

/** A git object with its id; compressed only when it is written, in the form its storage needs. */
export class EncodedObject {
  private looseForm: Buffer | undefined;

  constructor(
    readonly oid: string,
    readonly type: ObjectType,
    readonly content: Buffer,
  ) {}

  /** The zlib-deflated wrapped object, as stored in a loose object file. */
  get deflated(): Buffer {
    return (this.looseForm ??= deflateSync(Buffer.concat([header(this.type, this.content), this.content]), {
      level: 1,
    }));
  }
}

/** `<type> <size>\0`, what git puts before an object's content (ASCII). */
function headerText(type: ObjectType, content: Buffer): string {
  return `${type} ${content.length}\0`;
}

function header(type: ObjectType, content: Buffer): Buffer {
  return Buffer.from(headerText(type, content), 'latin1');
}

/** Objects up to this size are hashed in one call on a copy with their header; larger ones in a stream, not copied. */
const ONE_SHOT_BYTES = 64 * 1024;

/** An object's id. A 100-key push hashes about 190 objects of a few hundred bytes to 3 KiB: in one call each (sha1.ts). */
export function encodeObject(type: ObjectType, content: Buffer): EncodedObject {
  let oid: string;
  if (content.length <= ONE_SHOT_BYTES) {
    const head = headerText(type, content);
    const wrapped = Buffer.allocUnsafe(head.length + content.length);
    wrapped.write(head, 0, 'latin1');
    content.copy(wrapped, head.length);
    oid = sha1Hex(wrapped);
  } else {
    oid = createHash('sha1').update(header(type, content)).update(content).digest('hex');
  }
  return new EncodedObject(oid, type, content);
}

export const TREE_MODE = '40000';
export const BLOB_MODE = '100644';

export interface TreeEntry {
  readonly name: string;
  readonly mode: string;
  readonly oid: string;
}

export function isTreeEntry(entry: TreeEntry): boolean {
  return entry.mode === TREE_MODE;
}

/** Git sorts tree entries by the bytes of their name, comparing a folder's name as if it ended in `/`. */
function sortKey(entry: TreeEntry): string {
  return isTreeEntry(entry) ? `${entry.name}/` : entry.name;
}

const ASCII = /^[\x00-\x7f]*$/;

/** Two entries in git's order of a tree's entries, as serializeTree writes them. */
export function compareTreeEntries(x: TreeEntry, y: TreeEntry): number {
  const [a, b] = [sortKey(x), sortKey(y)];
  if (ASCII.test(a) && ASCII.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * A tree's content, entries in git's order; `idAt` learns where each entry's id was written.
 * `allocate` makes its buffer: Node's pool by default, which is right for a tree written and let go.
 */
export function serializeTree(
  entries: Iterable<TreeEntry>,
  idAt?: (name: string, at: number) => void,
  allocate: (size: number) => Buffer = Buffer.allocUnsafe,
): Buffer {
  const keyed = [...entries].map((entry) => ({ entry, key: sortKey(entry) }));
  // For ASCII names comparing strings is comparing bytes, and much cheaper than making Buffers.
  if (keyed.every(({ key }) => ASCII.test(key))) keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  else keyed.sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)));
  let size = 0;
  for (const { entry } of keyed) size += entry.mode.length + Buffer.byteLength(entry.name) + 22;
  const tree = allocate(size);
  let at = 0;
  for (const { entry } of keyed) {
    at += tree.write(`${entry.mode} ${entry.name}\0`, at);
    idAt?.(entry.name, at);
    at += tree.write(entry.oid, at, 'hex');
  }
  return tree;
}

/**
 * A tree's serialized content with where each entry's id sits in it, so that the next tree of the
 * same names (a commit that changes a few of the `keys` tree's 256 shards) is a copy with those
 * ids written over, not a sort and serialization of every entry again (about a tenth of
 * a 1-key push's CPU went to serializing the `keys` tree).
 *
 * Its content is memory of its own (allocUnsafeSlow): a snapshot keeps the trees it was staged
 * with for as long as it lives (each shard's, shared by the snapshots after it), and a tree
 * under 4 KiB made in Node's pool is a view into a shared 8 KiB slab, which it keeps whole
 * (a shard of a few keys is under 100 bytes).
 */
export class SerializedTree {
  /** The tree as a git object, with its id. */
  readonly object: EncodedObject;

  private constructor(
    content: Buffer,
    /** Each entry's name, to the offset of its 20-byte id in the content. */
    private readonly idAt: ReadonlyMap<string, number>,
  ) {
    this.object = encodeObject('tree', content);
  }

  static of(entries: Iterable<TreeEntry>): SerializedTree {
    const idAt = new Map<string, number>();
    const content = serializeTree(entries, (name, at) => idAt.set(name, at), Buffer.allocUnsafeSlow);
    return new SerializedTree(content, idAt);
  }

  /** The tree with the ids of the named entries replaced; undefined when a name is not one of its entries. */
  withIds(ids: Iterable<readonly [name: string, oid: string]>): SerializedTree | undefined {
    const content = Buffer.allocUnsafeSlow(this.object.content.length);
    this.object.content.copy(content);
    for (const [name, oid] of ids) {
      const at = this.idAt.get(name);
      if (at === undefined) return undefined;
      content.write(oid, at, 'hex');
    }
    return new SerializedTree(content, this.idAt);
  }
}

export function parseTree(content: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let at = 0;
  while (at < content.length) {
    const space = content.indexOf(0x20, at);
    const nul = content.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > content.length) throw new ObjectFormatError('malformed tree object');
    entries.push({
      mode: content.toString('latin1', at, space),
      name: content.toString('utf8', space + 1, nul),
      oid: content.toString('hex', nul + 1, nul + 21),
    });
    at = nul + 21;
  }
  return entries;
}

export interface Signature {
  readonly name: string;
  readonly email: string;
  /** Seconds since the epoch. */
  readonly timestamp: number;
}

export interface CommitFields {
  readonly tree: string;
  readonly parents: readonly string[];
  readonly author: Signature;
  readonly committer: Signature;
  readonly message: string;
}

function formatSignature(s: Signature): string {
  return `${s.name} <${s.email}> ${s.timestamp} +0000`;
}

export function serializeCommit(commit: CommitFields): Buffer {
  const lines = [`tree ${commit.tree}`];
  for (const parent of commit.parents) lines.push(`parent ${parent}`);
  lines.push(`author ${formatSignature(commit.author)}`, `committer ${formatSignature(commit.committer)}`, '');
  return Buffer.from(`${lines.join('\n')}\n${commit.message}`);
}

export interface ParsedCommit {
  readonly tree: string;
  readonly parents: string[];
  /** Committer time, seconds since the epoch. */
  readonly committedAt: number;
  /** Who wrote the change, as `git log` shows it (`%an`, `%ae`); empty when the line is malformed. */
  readonly author: { readonly name: string; readonly email: string };
  readonly message: string;
}

/** A commit's or tag's header lines and its message, which git writes after the first empty line. */
function headerAndMessage(content: Buffer): { header: string[]; message: string } {
  const text = content.toString('utf8');
  const end = text.indexOf('\n\n');
  return end < 0
    ? { header: text.split('\n'), message: '' }
    : { header: text.slice(0, end).split('\n'), message: text.slice(end + 2) };
}

export function parseCommit(content: Buffer): ParsedCommit {
  const { header, message } = headerAndMessage(content);
  let tree = '';
  let committedAt = 0;
  let author = { name: '', email: '' };
  const parents: string[] = [];
  for (const line of header) {
    if (line.startsWith('tree ')) tree = line.slice(5);
    else if (line.startsWith('parent ')) parents.push(line.slice(7));
    else if (line.startsWith('committer ')) committedAt = Number(/ (\d+) [+-]\d{4}$/.exec(line)?.[1] ?? 0);
    else if (line.startsWith('author ')) {
      const match = /^author (.*?) ?<([^>]*)>/.exec(line);
      if (match) author = { name: match[1], email: match[2] };
    }
  }
  if (!/^[0-9a-f]{40}$/.test(tree)) throw new ObjectFormatError('malformed commit object');
  return { tree, parents, committedAt, author, message };
}

/** The content of an annotated tag object, as `git tag -a` and `git mktag` write it. */
export function serializeTag(fields: {
  object: string;
  type: string;
  tag: string;
  tagger: Signature;
  message: string;
}): Buffer {
  const { tagger } = fields;
  const message = fields.message.replace(/\n+$/, '');
  return Buffer.from(
    `object ${fields.object}\ntype ${fields.type}\ntag ${fields.tag}\n` +
      `tagger ${tagger.name} <${tagger.email}> ${tagger.timestamp} +0000\n\n` +
      (message === '' ? '' : `${message}\n`),
  );
}

export interface ParsedTag {
  readonly object: string;
  readonly type: string;
  /** Tagger time in seconds since the epoch, if the tag has a well-formed tagger line. */
  readonly taggedAt: number | undefined;
  readonly message: string;
}

export function parseTag(content: Buffer): ParsedTag {
  const { header, message } = headerAndMessage(content);
  let object = '';
  let type = '';
  let taggedAt: number | undefined;
  for (const line of header) {
    if (line.startsWith('object ')) object = line.slice(7);
    else if (line.startsWith('type ')) type = line.slice(5);
    else if (line.startsWith('tagger ')) {
      const time = /> (\d+) [+-]\d{4}$/.exec(line)?.[1];
      taggedAt = time === undefined ? undefined : Number(time);
    }
  }
  if (!/^[0-9a-f]{40}$/.test(object)) throw new ObjectFormatError('malformed tag object');
  // A signed tag carries its signature at the end of the message.
  const signature = /^-----BEGIN (?:PGP|SSH) SIGNATURE-----$/m.exec(message);
  const unsigned = signature ? message.slice(0, signature.index) : message;
  return { object, type, taggedAt, message: unsigned.replace(/\n+$/, '') };
}
