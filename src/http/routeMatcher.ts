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

/** A route the matcher found: its index in the table, and its parameters as sent (not decoded). */
export interface RouteMatch {
  readonly index: number;
  readonly route: HttpRoute;
  readonly params: Readonly<Record<string, string>>;
}

interface Compiled {
  readonly index: number;
  readonly route: HttpRoute;
  readonly pattern: RegExp;
  readonly names: readonly string[];
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A template as a regular expression, with the names of its parameters in order. */
export function compileTemplate(route: HttpRoute): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const trimmed = route.path.length > 1 && route.path.endsWith('/') ? route.path.slice(0, -1) : route.path;
  let wildcard = false;
  const source = trimmed
    .split('/')
    .map((segment) =>
      segment.replace(
        /:([A-Za-z_][A-Za-z0-9_]*)|\*([A-Za-z_][A-Za-z0-9_]*)|[^:*]+/g,
        (part, param?: string, rest?: string) => {
          if (param) {
            names.push(param);
            return '([^/]+?)';
          }
          if (rest) {
            names.push(rest);
            wildcard = true;
            return '(.*)';
          }
          return escape(part);
        },
      ),
    )
    .join('/');
  const end = wildcard || route.strict ? '$' : '/?$';
  const exact = route.path === '/' ? '^/$' : `^${source}${route.path.endsWith('/') ? '/' : ''}${end}`;
  return {
    pattern: new RegExp(route.path === '/' && !route.strict ? '^/?$' : exact, route.exactCase ? '' : 'i'),
    names,
  };
}

/** The bucket key of a template: its first two segments when literal, else its first, else ''. */
function keyOfTemplate(path: string): string {
  const [first = '', second = ''] = path.slice(1).split('/');
  const literal = (segment: string) => segment !== '' && !/[:*]/.test(segment);
  if (!literal(first)) return '';
  return literal(second) ? `${first.toLowerCase()}/${second.toLowerCase()}` : first.toLowerCase();
}

export class RouteMatcher {
  private readonly byTwo = new Map<string, Compiled[]>();
  private readonly byOne = new Map<string, Compiled[]>();
  private readonly anywhere: Compiled[] = [];

  constructor(table: readonly HttpRoute[]) {
    const compiled = table.map((route, index): Compiled & { key: string } => ({
      index,
      route,
      key: keyOfTemplate(route.path),
      ...compileTemplate(route),
    }));
    for (const entry of compiled) {
      if (entry.key === '') this.anywhere.push(entry);
      else if (!entry.key.includes('/')) this.byOne.set(entry.key, []);
      else this.byTwo.set(entry.key, []);
    }
    // Each bucket holds, in table order, every route a path of its key may match.
    for (const [key, list] of this.byTwo)
      list.push(...compiled.filter((c) => c.key === key || c.key === key.split('/')[0] || c.key === ''));
    for (const [key, list] of this.byOne) list.push(...compiled.filter((c) => c.key === key || c.key === ''));
  }

  private candidates(pathname: string): readonly Compiled[] {
    const second = pathname.indexOf('/', 1);
    const first = (second === -1 ? pathname.slice(1) : pathname.slice(1, second)).toLowerCase();
    if (second !== -1) {
      const third = pathname.indexOf('/', second + 1);
      const two = `${first}/${(third === -1 ? pathname.slice(second + 1) : pathname.slice(second + 1, third)).toLowerCase()}`;
      const found = this.byTwo.get(two);
      if (found) return found;
    }
    return this.byOne.get(first) ?? this.anywhere;
  }

  /** The first route of the table answering `method` at `pathname`, or undefined. */
  match(method: string, pathname: string): RouteMatch | undefined {
    const wanted = method === 'HEAD' ? 'get' : method.toLowerCase();
    for (const entry of this.candidates(pathname)) {
      if (!entry.route.anyMethod && entry.route.method !== wanted) continue;
      const found = entry.pattern.exec(pathname);
      if (!found) continue;
      const params: Record<string, string> = {};
      entry.names.forEach((name, i) => (params[name] = found[i + 1]));
      return { index: entry.index, route: entry.route, params };
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
