/**
 * Renders a file template for a context: every `${ key }` (spaces optional) is replaced by the
 * key's value resolved for the same context; the value of a FileEmbed key is the rendered file it
 * names. A key without a value for the context renders as MISSING_VALUE and is reported, so a
 * client can tell; a chain of embedded files that comes back to itself is a ReferenceCycleError.
 *
 * Bounded work: a Renderer renders each path once (its answers are memoized by path,
 * and one Renderer serves one context), without recursion (an explicit stack of files being
 * rendered), and never builds a string beyond MAX_RENDERED_FILE_CHARS nor embeds deeper than
 * MAX_EMBED_DEPTH (renderLimits.ts): a RenderLimitError naming the file instead.
 */
import { keyId, KEY_REFERENCE } from './names.js';
import type { FileRecord, KeyRecord, StoredValue } from './model.js';
import { embedTooDeep, fileTooLarge, MAX_EMBED_DEPTH, MAX_RENDERED_FILE_CHARS } from './renderLimits.js';
import { ReferenceCycleError } from './errors.js';

/** ConfigHub's marker for a reference without a value, kept so existing clients recognise it. */
export const MISSING_VALUE = '[ ERROR: No property value resolved ]';
export const MISSING_FILE = '[ ERROR: No file resolved ]';
/** Stands for the value of a secured key whose group the reader has not unlocked. */
export const ENCRYPTED_VALUE = '[ ERROR: Encrypted value, security group password required ]';
/** Stands for an embedded secured file whose group the reader has not unlocked. */
export const ENCRYPTED_FILE = '[ ERROR: Encrypted file, security group password required ]';

export interface RenderSource {
  key(id: string): KeyRecord | undefined;
  /** The value for the context, opened; 'locked' when it is sealed and the reader may not open it. */
  value(key: KeyRecord): StoredValue | 'locked' | undefined;
  file(path: string): FileRecord | undefined;
}

export interface RenderedFile {
  readonly content: string;
  /** Keys referenced (also through embedded files) that have no value for the context. */
  readonly unresolved: readonly string[];
  /** Keys referenced whose value is sealed in a group the reader has not unlocked. */
  readonly encrypted: readonly string[];
}

/** A file being rendered: its template cut at references, and what it has produced so far. */
interface Frame {
  readonly path: string;
  readonly content: string;
  readonly references: RegExpMatchArray[];
  /** The next reference to replace. */
  next: number;
  /** Where the text after the last replaced reference begins. */
  textFrom: number;
  readonly parts: string[];
  length: number;
  /** Levels of embedding below this file, as far as rendered. */
  below: number;
  readonly unresolved: Set<string>;
  readonly encrypted: Set<string>;
}

function frameOf(file: FileRecord): Frame {
  return {
    path: file.path,
    content: file.content,
    references: [...file.content.matchAll(KEY_REFERENCE)],
    next: 0,
    textFrom: 0,
    parts: [],
    length: 0,
    below: 0,
    unresolved: new Set(),
    encrypted: new Set(),
  };
}

function append(frame: Frame, text: string): void {
  if (frame.length + text.length > MAX_RENDERED_FILE_CHARS) throw fileTooLarge(frame.path);
  frame.parts.push(text);
  frame.length += text.length;
}

/** Renders files for one context; each path is rendered once, however often it is embedded. */
export class Renderer {
  /** Files rendered, by path, with the levels of embedding below each. */
  private readonly done = new Map<string, { rendered: RenderedFile; below: number }>();

  constructor(private readonly source: RenderSource) {}

  render(file: FileRecord): RenderedFile {
    const known = this.done.get(file.path);
    if (known) return known.rendered;
    const stack: Frame[] = [frameOf(file)];
    const rendering = new Set([file.path]);
    while (stack.length > 0) {
      const frame = stack[stack.length - 1];
      if (frame.next === frame.references.length) {
        append(frame, frame.content.slice(frame.textFrom));
        const rendered = {
          content: frame.parts.join(''),
          unresolved: [...frame.unresolved],
          encrypted: [...frame.encrypted],
        };
        this.done.set(frame.path, { rendered, below: frame.below });
        rendering.delete(frame.path);
        stack.pop();
        continue;
      }
      const match = frame.references[frame.next];
      const replacement = this.replacement(stack, match[1]);
      if (typeof replacement !== 'string') {
        // An embedded file not rendered yet: render it first, then come back to this reference.
        if (rendering.has(replacement.path))
          throw new ReferenceCycleError([...stack.map((f) => f.path), replacement.path]);
        if (stack.length > MAX_EMBED_DEPTH)
          throw embedTooDeep(stack[0].path, [...stack.map((f) => f.path), replacement.path]);
        stack.push(frameOf(replacement));
        rendering.add(replacement.path);
        continue;
      }
      append(frame, frame.content.slice(frame.textFrom, match.index));
      append(frame, replacement);
      frame.textFrom = match.index! + match[0].length;
      frame.next++;
    }
    return this.done.get(file.path)!.rendered;
  }

  /** What a reference in the top frame renders as, or the embedded file still to render. */
  private replacement(stack: readonly Frame[], name: string): string | FileRecord {
    const frame = stack[stack.length - 1];
    const key = this.source.key(keyId(name));
    const value = key && this.source.value(key);
    if (!key || !value) {
      frame.unresolved.add(key?.key ?? name);
      return MISSING_VALUE;
    }
    if (value === 'locked') {
      frame.encrypted.add(key.key);
      return ENCRYPTED_VALUE;
    }
    if (key.vdt !== 'FileEmbed') return value.value ?? (key.vdt === 'FileRef' ? '' : 'null');
    if (value.value === null) return '';
    const path = value.value.startsWith('/') ? value.value.slice(1) : value.value;
    const done = this.done.get(path);
    if (done) {
      // Rendered before (here or for another file): its depth counts as if rendered again.
      if (stack.length + done.below > MAX_EMBED_DEPTH)
        throw embedTooDeep(stack[0].path, [...stack.map((f) => f.path), path, '…']);
      frame.below = Math.max(frame.below, done.below + 1);
      const { rendered } = done;
      for (const name of rendered.unresolved) frame.unresolved.add(name);
      for (const name of rendered.encrypted) frame.encrypted.add(name);
      return rendered.content;
    }
    return this.source.file(path) ?? MISSING_FILE;
  }
}

/** Renders one file (and what it embeds) for a context. */
export function renderFile(file: FileRecord, source: RenderSource): RenderedFile {
  return new Renderer(source).render(file);
}
