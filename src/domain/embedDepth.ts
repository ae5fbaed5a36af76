/**
 * The embed depth a push can create, known from the files and FileEmbed values alone:
 * a file embeds the files that any value of a FileEmbed key it references names, in any context.
 * That over-approximates what one context renders, so a push is refused (304) only where some
 * chain of paths is deeper than MAX_EMBED_DEPTH. An edge that closes a cycle counts nothing here:
 * whether a cycle is real depends on the context, and a pull answers it with a 400 naming it.
 *
 * Work: each path and edge once (depth-first with an explicit stack, no recursion on depth).
 */
import type { FileRecord, KeyRecord } from './model.js';
import { keyId } from './names.js';
import { templateReferences } from './model.js';
import { MAX_EMBED_DEPTH } from './renderLimits.js';

export interface TooDeep {
  /** The file at the top of the chain, and the chain of paths. */
  readonly path: string;
  readonly chain: readonly string[];
}

/** The first file whose chain of embedded files is deeper than MAX_EMBED_DEPTH, if any. */
export function deepestEmbedProblem(
  files: Iterable<FileRecord>,
  key: (id: string) => KeyRecord | undefined,
): TooDeep | undefined {
  const embeds = new Map<string, Set<string>>();
  for (const file of files) {
    if (!file.active) continue;
    const targets = embeds.get(file.path) ?? new Set<string>();
    embeds.set(file.path, targets);
    for (const name of templateReferences(file)) {
      const referenced = key(keyId(name));
      if (referenced?.vdt !== 'FileEmbed') continue;
      for (const value of referenced.values) {
        if (value.active && value.value !== null)
          targets.add(value.value.startsWith('/') ? value.value.slice(1) : value.value);
      }
    }
  }
  // below: levels of embedding under a path (longest chain, cycle-closing edges left out).
  const below = new Map<string, number>();
  const next = new Map<string, string>();
  const onStack = new Set<string>();
  for (const root of embeds.keys()) {
    if (below.has(root)) continue;
    const stack: { path: string; targets: Iterator<string> }[] = [
      { path: root, targets: (embeds.get(root) ?? new Set()).values() },
    ];
    onStack.add(root);
    below.set(root, 0);
    while (stack.length > 0) {
      const frame = stack[stack.length - 1];
      const step = frame.targets.next();
      if (step.done) {
        onStack.delete(frame.path);
        stack.pop();
        const parent = stack[stack.length - 1];
        if (parent) raise(parent.path, frame.path);
        continue;
      }
      const target = step.value;
      if (!embeds.has(target) || onStack.has(target)) continue; // no such file, or a cycle
      if (below.has(target)) {
        raise(frame.path, target);
        continue;
      }
      below.set(target, 0);
      onStack.add(target);
      stack.push({ path: target, targets: embeds.get(target)!.values() });
    }
  }
  for (const [path, depth] of below) {
    if (depth <= MAX_EMBED_DEPTH) continue;
    const chain = [path];
    while (next.has(chain[chain.length - 1]) && chain.length <= MAX_EMBED_DEPTH + 1)
      chain.push(next.get(chain[chain.length - 1])!);
    return { path, chain };
  }
  return undefined;

  function raise(parent: string, child: string): void {
    const depth = below.get(child)! + 1;
    if (depth > below.get(parent)!) {
      below.set(parent, depth);
      next.set(parent, child);
    }
  }
}
