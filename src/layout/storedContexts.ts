/**
 * The contexts of stored values, each parsed once and shared: every value of a key document names
 * its context (`Production;web;node1`), most values of a repository name one of a few dozen, and
 * a parsed context per value was an array and its items per value: 50 MB of the 170 MB heap
 * holding 100 repositories of 1,000 keys. One frozen array per distinct text, shared by every
 * value (and every repository) that names it; `Context` is a readonly type, and frozen it stays
 * so at run time too.
 *
 * Bounded: past CONTEXTS_KEPT distinct texts the table starts again (a parsed context is the same
 * whichever array holds it, so starting again only costs the sharing, never correctness).
 */
import type { Context } from '../domain/context.js';
import { ownString } from '../lib/ownCopies.js';

export const CONTEXTS_KEPT = 16_384;

const parsed = new Map<string, Context>();

/** The context a stored value's text names (`;` between items), shared with every other value naming it. */
export function storedContext(text: string): Context {
  let context = parsed.get(text);
  if (context === undefined) {
    if (parsed.size >= CONTEXTS_KEPT) parsed.clear();
    const own = ownString(text); // the key is kept: not a view into a document's text
    context = Object.freeze(own.split(';'));
    parsed.set(own, context);
  }
  return context;
}
