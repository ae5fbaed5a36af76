/**
 * The route table's matcher: templates compiled once, matched as express matched them (no regard
 * to case, an optional final slash, HEAD by a GET route) unless a route says otherwise, the first
 * route of the table winning, and parameters handed over as sent.
 */
import { describe, expect, it } from 'vitest';
import { RouteMatcher } from '../../../src/http/routeMatcher.js';
import { ROUTE_TABLE, type HttpRoute, type Method } from '../../../src/http/routeTable.js';

const route = (method: Method, path: string, more: Partial<HttpRoute> = {}): HttpRoute => ({
  method,
  path,
  undocumented: 'a test route',
  serve: () => ({}),
  ...more,
});

const TABLE: HttpRoute[] = [
  route('get', '/'),
  route('get', '/rest/pull'),
  route('get', '/rest/pull/:account/:repository'),
  route('post', '/rest/push/:account/:repository'),
  route('get', '/ui', { strict: true }),
  route('get', '/ui/', { strict: true }),
  route('get', '/ui/:name', { strict: true }),
  route('get', '/spring/*rest', { exactCase: true }),
  route('get', '/git/:account/:repository.git/info/refs', { anyMethod: true, exactCase: true }),
  route('get', '/git/*rest', { anyMethod: true, exactCase: true }),
  route('delete', '/rest/admin/:kind/:label'),
  route('delete', '/rest/admin/tokens/:label'),
];
const matcher = new RouteMatcher(TABLE);
const found = (method: string, path: string) => {
  const match = matcher.match(method, path);
  return match && { path: match.route.path, params: match.params };
};

describe('RouteMatcher', () => {
  it('matches without regard to case, with or without a final slash, and hands parameters over as sent', () => {
    for (const path of ['/rest/pull/acme/app', '/REST/Pull/acme/app', '/rest/pull/acme/app/'])
      expect(found('GET', path), path).toEqual({
        path: '/rest/pull/:account/:repository',
        params: { account: 'acme', repository: 'app' },
      });
    expect(found('GET', '/rest/pull/%61cme/a%2Fb')?.params).toEqual({ account: '%61cme', repository: 'a%2Fb' });
    expect(found('GET', '/rest/pull')?.path).toBe('/rest/pull');
    expect(found('GET', '/')?.path).toBe('/');
  });

  it('answers HEAD by a GET route, and no other method by a route of another', () => {
    expect(found('HEAD', '/rest/pull/acme/app')?.path).toBe('/rest/pull/:account/:repository');
    expect(found('POST', '/rest/pull/acme/app')).toBeUndefined();
    expect(found('GET', '/rest/push/acme/app')).toBeUndefined();
    expect(found('POST', '/rest/push/acme/app')?.path).toBe('/rest/push/:account/:repository');
  });

  it('leaves near misses unmatched: a missing or extra segment, an empty parameter', () => {
    for (const path of ['/rest/pull/acme', '/rest/pull/acme/app/more', '/rest/pull//app', '/rest/pulls/acme/app'])
      expect(found('GET', path), path).toBeUndefined();
  });

  it('keeps a strict route to its own final slash, and an exact-case route to its case', () => {
    expect(found('GET', '/ui')?.path).toBe('/ui');
    expect(found('GET', '/ui/')?.path).toBe('/ui/');
    expect(found('GET', '/ui/app.js')?.path).toBe('/ui/:name');
    expect(found('GET', '/ui/app.js/')).toBeUndefined();
    expect(found('GET', '/spring/acme.app/Prod')?.params).toEqual({ rest: 'acme.app/Prod' });
    expect(found('GET', '/SPRING/acme.app/Prod')).toBeUndefined();
    expect(found('GET', '/spring')).toBeUndefined();
  });

  it('serves any method on an anyMethod route, the first route of the table winning', () => {
    expect(found('POST', '/git/acme/app.git/info/refs')).toEqual({
      path: '/git/:account/:repository.git/info/refs',
      params: { account: 'acme', repository: 'app' },
    });
    expect(found('GET', '/git/acme/app/info/refs')?.path).toBe('/git/*rest');
    expect(found('DELETE', '/rest/admin/tokens/x')?.path).toBe('/rest/admin/:kind/:label');
  });

  it('names the methods a path answers (OPTIONS)', () => {
    expect(matcher.methodsAt('/rest/pull/acme/app').sort()).toEqual(['GET', 'HEAD']);
    expect(matcher.methodsAt('/rest/nosuch')).toEqual([]);
  });

  it("finds every route of the server's table at its own path, and no earlier route takes it", () => {
    const server = new RouteMatcher(ROUTE_TABLE);
    ROUTE_TABLE.forEach((entry, index) => {
      const path = entry.path.replace(/[:*]([A-Za-z]+)/g, 'x1');
      expect(server.match(entry.method.toUpperCase(), path)?.index, `${entry.method} ${entry.path}`).toBe(index);
    });
  });
});
