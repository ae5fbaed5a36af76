/** The mapping of Spring's application, profiles and label onto a repository, a context and a point. */
import { describe, expect, it } from 'vitest';
import {
  contextOfProfiles,
  labelPoint,
  profileList,
  repositoryCandidates,
} from '../../../../src/service/protocols/springEnvironment.js';
import { typedValue } from '../../../../src/service/protocols/resolvedKeys.js';

const LEVELS = ['Environment', 'Application', 'Instance'];

describe('the Spring mapping', () => {
  it('tries every split of account.repository at a dot, first first', () => {
    expect(repositoryCandidates('acme.app')).toEqual([['acme', 'app']]);
    expect(repositoryCandidates('acme.co.app.v2')).toEqual([
      ['acme', 'co.app.v2'],
      ['acme.co', 'app.v2'],
      ['acme.co.app', 'v2'],
    ]);
    expect(repositoryCandidates('nodots')).toEqual([]);
    expect(repositoryCandidates('.app')).toEqual([]);
  });

  it("maps profiles onto levels in order, * for the rest, and Spring's default alone onto all *", () => {
    expect(contextOfProfiles(profileList('Production,Billing'), LEVELS)).toEqual(['Production', 'Billing', '*']);
    expect(contextOfProfiles(profileList(' Production , *, node-7 '), LEVELS)).toEqual(['Production', '*', 'node-7']);
    expect(contextOfProfiles(profileList('default'), LEVELS)).toEqual(['*', '*', '*']);
    expect(contextOfProfiles(profileList('Production,default'), LEVELS)).toEqual(['Production', 'default', '*']);
    expect(() => contextOfProfiles(profileList('a,b,c,d'), LEVELS)).toThrow(/4 profiles given.*at most 3/);
    expect(() => contextOfProfiles(profileList('a b'), LEVELS)).toThrow(/Profile item 1 \(Environment\)/);
  });

  it('reads a label with (_) as /, and main or master as the head', () => {
    expect(labelPoint(undefined)).toBeUndefined();
    expect(labelPoint('main')).toBeUndefined();
    expect(labelPoint('MASTER')).toBeUndefined();
    expect(labelPoint('release(_)2026(_)1')).toBe('release/2026/1');
    expect(labelPoint('v1')).toBe('v1');
  });

  it('types values by their value type', () => {
    expect(typedValue('Integer', '42', 'text')).toBe(42);
    expect(typedValue('Long', '9007199254740993', 'text')).toBe('9007199254740993');
    expect(typedValue('Double', '2.5', 'text')).toBe(2.5);
    expect(typedValue('Boolean', 'TRUE', 'text')).toBe(true);
    expect(typedValue('Map', '{"a":1}', 'text')).toBe('{"a":1}');
    expect(typedValue('Map', '{"a":1}', 'parsed')).toEqual({ a: 1 });
    expect(typedValue('Text', '42', 'parsed')).toBe('42');
    expect(typedValue('Integer', null, 'parsed')).toBeNull();
  });
});
