/**
 * The read operations of ConfigHub's client API (contract section 7), as bodies built from one
 * snapshot: pull, raw file, key data, repository info and export. Pure of I/O: the caller picks
 * the snapshot (head, tag or date) and turns the result into an answer.
 */
import { contentTypeOf } from '../domain/contentType.js';
import { formatContext, WILDCARD, type Context } from '../domain/context.js';
import { globToRegExp } from '../domain/glob.js';
import type { FileRecord, KeyRecord } from '../domain/model.js';
import { keyId } from '../domain/names.js';
import { renderFile, ReferenceCycleError, type RenderedFile } from '../domain/render.js';
import { requestContext, resolveFile, resolveValue, type RequestContext } from '../domain/resolve.js';
import type { GitRepository } from '../store/repository.js';
import type { Snapshot } from '../store/snapshot.js';
import { ServiceError } from './errors.js';

export interface PullOptions {
  readonly includeComments: boolean;
  readonly includeValueContext: boolean;
  readonly noProperties: boolean;
  readonly noFiles: boolean;
}

export interface ReadTarget {
  readonly repository: GitRepository;
  readonly account: string;
  readonly name: string;
  readonly snapshot: Snapshot;
  /** ISO date of the commit read, when the caller asked for the past (Tag, Repository-Date). */
  readonly repoDate?: string;
}

const byName = (a: string, b: string) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0);

function filesByPath(snapshot: Snapshot): Map<string, FileRecord[]> {
  const paths = new Map<string, FileRecord[]>();
  for (const file of snapshot.files()) paths.set(file.path, [...(paths.get(file.path) ?? []), file]);
  return paths;
}

/** Renders every file that resolves for a context, by path. */
class ContextView {
  private readonly paths: Map<string, FileRecord[]>;

  constructor(
    private readonly snapshot: Snapshot,
    private readonly request: RequestContext,
  ) {
    this.paths = filesByPath(snapshot);
  }

  file(path: string): FileRecord | undefined {
    return resolveFile(this.paths.get(path) ?? [], this.request);
  }

  render(file: FileRecord): RenderedFile {
    try {
      return renderFile(file, {
        key: (id) => this.snapshot.key(id),
        value: (key) => resolveValue(key, this.request),
        file: (path) => this.file(path),
      });
    } catch (error) {
      if (error instanceof ReferenceCycleError) throw new ServiceError('invalid_argument', error.message);
      throw error;
    }
  }

  renderedFiles(): [string, RenderedFile][] {
    const out: [string, RenderedFile][] = [];
    for (const path of [...this.paths.keys()].sort()) {
      const file = this.file(path);
      if (file) out.push([path, this.render(file)]);
    }
    return out;
  }
}

/** A stored value as a client sees it: List and Map as JSON, everything else as text. */
function typedValue(key: KeyRecord, text: string | null): unknown {
  if (text === null || (key.vdt !== 'List' && key.vdt !== 'Map')) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function pullBody(target: ReadTarget, contextText: string, context: Context, options: PullOptions): Record<string, unknown> {
  const request = requestContext(context);
  const view = new ContextView(target.snapshot, request);
  const body: Record<string, unknown> = {};
  if (!options.noFiles) {
    const files: Record<string, unknown> = {};
    for (const [path, rendered] of view.renderedFiles()) {
      files[path] = {
        content: rendered.content,
        'content-type': contentTypeOf(path),
        ...(rendered.unresolved.length ? { unresolved: rendered.unresolved } : {}),
      };
    }
    body.files = files;
  }
  if (!options.noProperties) {
    const properties: Record<string, unknown> = {};
    const keys = [...target.snapshot.keys()].sort((a, b) => byName(a.key, b.key));
    for (const key of keys) {
      const value = resolveValue(key, request);
      if (!value) continue;
      properties[key.key] = {
        ...(key.vdt !== 'Text' ? { type: key.vdt } : {}),
        ...(key.deprecated ? { deprecated: true } : {}),
        ...(options.includeComments && key.readme.trim() ? { comment: key.readme } : {}),
        val: typedValue(key, value.value),
        ...(options.includeValueContext ? { context: [...value.context] } : {}),
      };
    }
    body.properties = properties;
  }
  body.account = target.account;
  body.repo = target.name;
  body.context = contextText;
  if (target.repoDate) body.repoDate = target.repoDate;
  return body;
}

export interface RawFile {
  readonly content: string;
  readonly contentType: string;
  readonly unresolved: readonly string[];
}

export function rawFile(target: ReadTarget, path: string, context: Context): RawFile {
  const normalized = path.startsWith('/') ? path.slice(1) : path;
  const view = new ContextView(target.snapshot, requestContext(context));
  const file = view.file(normalized);
  if (!file) throw new ServiceError('not_found', `no file ${normalized} resolves for context ${formatContext(context)}`);
  const rendered = view.render(file);
  return { content: rendered.content, contentType: contentTypeOf(normalized), unresolved: rendered.unresolved };
}

export function keyDataBody(target: ReadTarget, name: string): Record<string, unknown> {
  const key = target.snapshot.key(keyId(name));
  if (!key) throw new ServiceError('not_found', `repository ${target.account}/${target.name} has no key ${name}`);
  return { key: key.key, readme: key.readme, deprecated: key.deprecated, vdt: key.vdt, push: key.push };
}

export interface InfoOptions {
  /** Levels whose item names to list: all when true, none when false, or these labels. */
  readonly contextElements: boolean | readonly string[];
  /** Files to list: all when true, none when false, or those matching a glob. */
  readonly files: boolean | string;
  readonly tags?: readonly { name: string; message: string; created: string }[];
}

/** Item names in use at each level, first spelling kept, sorted. */
function contextElements(snapshot: Snapshot): Map<string, string[]> {
  const levels = snapshot.settings.levels;
  const seen = levels.map(() => new Map<string, string>());
  const add = (context: Context) =>
    context.forEach((item, i) => {
      if (item !== WILDCARD && !seen[i].has(item.toLowerCase())) seen[i].set(item.toLowerCase(), item);
    });
  for (const key of snapshot.keys()) for (const value of key.values) add(value.context);
  for (const file of snapshot.files()) add(file.context);
  return new Map(levels.map((level, i) => [level, [...seen[i].values()].sort(byName)]));
}

export function infoBody(target: ReadTarget, options: InfoOptions): Record<string, unknown> {
  const { snapshot } = target;
  const body: Record<string, unknown> = { account: target.account, repository: target.name };
  if (target.repoDate) body.date = target.repoDate;
  body.context = snapshot.settings.levels;
  if (options.contextElements !== false) {
    const elements = contextElements(snapshot);
    const wanted = options.contextElements === true ? [...elements.keys()] : options.contextElements;
    const out: Record<string, string[]> = {};
    for (const label of wanted) {
      const level = [...elements.keys()].find((name) => name.toLowerCase() === label.toLowerCase());
      if (!level) throw new ServiceError('invalid_argument', `Context-Labels names ${label}, which is not a level of this repository (${snapshot.settings.levels.join(', ')})`);
      out[level] = elements.get(level)!;
    }
    body.contextElements = out;
  }
  if (options.files !== false) {
    const pattern = options.files === true ? undefined : globToRegExp(options.files);
    body.files = [...snapshot.files()]
      .filter((file) => !pattern || pattern.test(file.path))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : byName(formatContext(a.context), formatContext(b.context))))
      .map((file) => ({ name: file.path.slice(file.path.lastIndexOf('/') + 1), path: file.path, context: formatContext(file.context), active: file.active }));
  }
  if (options.tags) {
    body.tags = options.tags.map((tag) => ({ name: tag.name, readme: tag.message, ts: Date.parse(tag.created), date: tag.created }));
  }
  return body;
}

export interface ExportOptions {
  readonly omitValues: boolean;
  readonly omitFiles: boolean;
}

/** The repository in the push format: pushing it into a repository with the same levels recreates it. */
export function exportBody(target: ReadTarget, options: ExportOptions): { data: Record<string, unknown>[] } {
  const data: Record<string, unknown>[] = [];
  for (const key of [...target.snapshot.keys()].sort((a, b) => byName(a.key, b.key))) {
    data.push({
      key: key.key,
      readme: key.readme,
      deprecated: key.deprecated,
      vdt: key.vdt,
      push: key.push,
      ...(options.omitValues ? {} : { values: key.values.map((v) => ({ context: formatContext(v.context), value: v.value, active: v.active })) }),
    });
  }
  if (!options.omitFiles) {
    const files = [...target.snapshot.files()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    for (const file of files) data.push({ file: file.path, context: formatContext(file.context), content: file.content, active: file.active });
  }
  return { data };
}
