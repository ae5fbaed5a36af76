/**
 * The route table's paths, compiled once into one matcher for plain node:http (app.ts asks it
 * for every request, before anything else runs). A path template is express's: `:name` is a
 * path parameter (one segment, `[^/]+`), `*name` the rest of the path (any number of segments).
 * Paths match without regard to case and with an optional final slash, as express matched them,
 * unless the route says otherwise (`exactCase`, `strict`). HEAD is answered by a GET route.
 *
 * Why buckets: a read is the most frequent request and must cost a regular expression or two,
 * not one per route. Routes are grouped by their first two literal segments; a request's
 * candidates are the routes of its two segments, of its first, and those starting with a
 * parameter, in table order.
 */
import type { HttpRoute } from './routeTable.js';

/** A route the matcher found: its index in the table, the path asked, and its parameters as sent (not decoded). */
export interface RouteMatch {
  readonly index: number;
  readonly route: HttpRoute;
  readonly pathname: string;
  readonly params: Readonly<Record<string, string>>;
}

interface Compiled {
  readonly index: number;
  readonly route: HttpRoute;
  readonly pattern: RegExp;
  readonly names: readonly string[];
  /** The first two segments as far as they are literal ('' where not), lower case. */
  readonly keys: readonly [string, string];
}

const PART = /:([A-Za-z_][A-Za-z0-9_]*)|\*([A-Za-z_][A-Za-z0-9_]*)|[^:*]+/g;

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A template as a regular expression, with the names of its parameters in order. */
export function compileTemplate(route: HttpRoute): { pattern: RegExp; names: string[] } {
  const flags = route.exactCase ? '' : 'i';
  if (route.path === '/') return { pattern: new RegExp(route.strict ? '^/$' : '^/?$', flags), names: [] };
  const names: string[] = [];
  let wildcard = false;
  const segment = (text: string) =>
    text.replace(PART, (part, param?: string, rest?: string) => {
      if (param) {
        names.push(param);
        // A parameter with text after it in its segment (`:repository.git`) leaves that text to it.
        return part.length === text.length ? '([^/]+)' : '([^/]+?)';
      }
      if (!rest) return escape(part);
      names.push(rest);
      wildcard = true;
      return '(.*)';
    });
  const finalSlash = route.path.endsWith('/');
  const source = (finalSlash ? route.path.slice(0, -1) : route.path).split('/').map(segment).join('/');
  const end = finalSlash ? '/$' : wildcard || route.strict ? '$' : '/?$';
  return { pattern: new RegExp(`^${source}${end}`, flags), names };
}

function keysOfTemplate(path: string): [string, string] {
  const [first = '', second = ''] = path.slice(1).split('/');
  const literal = (text: string) => text !== '' && !/[:*]/.test(text);
  if (!literal(first)) return ['', ''];
  return [first.toLowerCase(), literal(second) ? second.toLowerCase() : ''];
}

/** The routes a path of one first segment may match: by its second segment, else those of no literal second. */
interface Bucket {
  readonly bySecond: ReadonlyMap<string, readonly Compiled[]>;
  readonly others: readonly Compiled[];
}

export class RouteMatcher {
  private readonly byFirst = new Map<string, Bucket>();
  private readonly anywhere: readonly Compiled[];

  constructor(table: readonly HttpRoute[]) {
    const compiled: Compiled[] = table.map((route, index) => ({
      index,
      route,
      keys: keysOfTemplate(route.path),
      ...compileTemplate(route),
    }));
    // Each list holds, in table order, every route a path of its keys may match.
    const where = (test: (first: string, second: string) => boolean) =>
      compiled.filter(({ keys: [first, second] }) => first === '' || test(first, second));
    this.anywhere = where(() => false);
    for (const first of new Set(compiled.map(({ keys }) => keys[0]).filter(Boolean))) {
      const bySecond = new Map<string, readonly Compiled[]>();
      for (const [key, second] of compiled.map(({ keys }) => keys))
        if (key === first && second !== '')
          bySecond.set(
            second,
            where((f, s) => f === first && (s === second || s === '')),
          );
      this.byFirst.set(first, { bySecond, others: where((f, s) => f === first && s === '') });
    }
  }

  private candidates(pathname: string): readonly Compiled[] {
    const second = pathname.indexOf('/', 1);
    const bucket = this.byFirst.get((second === -1 ? pathname.slice(1) : pathname.slice(1, second)).toLowerCase());
    if (!bucket) return this.anywhere;
    if (second === -1) return bucket.others;
    const third = pathname.indexOf('/', second + 1);
    const next = (third === -1 ? pathname.slice(second + 1) : pathname.slice(second + 1, third)).toLowerCase();
    return bucket.bySecond.get(next) ?? bucket.others;
  }

  /** The first route of the table answering `method` at `pathname`, or undefined. */
  match(method: string, pathname: string): RouteMatch | undefined {
    const wanted = method === 'HEAD' ? 'get' : method.toLowerCase();
    for (const entry of this.candidates(pathname)) {
      if (!entry.route.anyMethod && entry.route.method !== wanted) continue;
      const found = entry.pattern.exec(pathname);
      if (!found) continue;
      const params: Record<string, string> = {};
      for (let i = 0; i < entry.names.length; i++) params[entry.names[i]] = found[i + 1];
      return { index: entry.index, route: entry.route, pathname, params };
    }
    return undefined;
  }

  /** The methods the table answers at `pathname` (for OPTIONS), upper case. */
  methodsAt(pathname: string): string[] {
    const methods = new Set<string>();
    for (const entry of this.candidates(pathname))
      if (!entry.route.anyMethod && entry.pattern.test(pathname)) methods.add(entry.route.method.toUpperCase());
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods];
  }
}
