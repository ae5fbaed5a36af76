/**
 * The commit message of a push: the change comment, then git trailers
 * recording Application-Name, the token's label and the Client-Version, which git reads back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitMessage, parseCommitMessage } from '../../../src/domain/commitMessage.js';
import { defaultPushSubject } from '../../../src/domain/defaultSubject.js';
import { tempGit, type TempGit } from '../../support/gitCli.js';

describe('commitMessage', () => {
  it('is empty when there is neither a comment nor provenance', () => {
    expect(commitMessage(undefined, {})).toBe('');
    expect(commitMessage('', {})).toBe('');
  });

  it('is the comment and one newline when there is no provenance', () => {
    expect(commitMessage('Set the port', {})).toBe('Set the port\n');
    expect(commitMessage('Set the port\n', {})).toBe('Set the port\n');
    expect(commitMessage('Title\n\nBody line 1\nBody line 2', {})).toBe('Title\n\nBody line 1\nBody line 2\n');
  });

  it('keeps the comment exactly, spaces and unicode included', () => {
    expect(commitMessage('  indented — ünïcödé 🎉  ', {})).toBe('  indented — ünïcödé 🎉  \n');
  });

  it('adds the trailers after a blank line, in a fixed order', () => {
    expect(
      commitMessage('Set the port', { clientVersion: 'v1.5', tokenLabel: 'ci', applicationName: 'deployer' }),
    ).toBe('Set the port\n\nApplication-Name: deployer\nToken: ci\nClient-Version: v1.5\n');
  });

  it('holds only the trailers when there is no comment', () => {
    expect(commitMessage(undefined, { tokenLabel: 'ci' })).toBe('Token: ci\n');
    expect(commitMessage('', { applicationName: 'app', clientVersion: 'v1.0' })).toBe(
      'Application-Name: app\nClient-Version: v1.0\n',
    );
  });

  it('leaves out trailers that are absent or empty once cleaned', () => {
    expect(commitMessage('c', { applicationName: '', tokenLabel: '   ', clientVersion: '\n\t' })).toBe('c\n');
    expect(commitMessage('c', { applicationName: 'app' })).toBe('c\n\nApplication-Name: app\n');
  });

  it('makes each trailer one trimmed line: control characters become spaces, so no trailer can be forged', () => {
    expect(commitMessage('c', { applicationName: ' my\napp\r\n\tname\u0000x\u007f ' })).toBe(
      'c\n\nApplication-Name: my app name x\n',
    );
    expect(commitMessage('c', { applicationName: 'x\nToken: forged' })).toBe(
      'c\n\nApplication-Name: x Token: forged\n',
    );
  });

  it('keeps a trailer to 200 characters', () => {
    const long = 'a'.repeat(250);
    expect(commitMessage('c', { applicationName: long })).toBe(`c\n\nApplication-Name: ${'a'.repeat(200)}\n`);
    expect(commitMessage('c', { applicationName: 'b'.repeat(200) })).toBe(
      `c\n\nApplication-Name: ${'b'.repeat(200)}\n`,
    );
  });

  it('always ends with exactly one newline when not empty', () => {
    for (const comment of ['a', 'a\n', 'a\n\n', undefined]) {
      const message = commitMessage(comment, { tokenLabel: 't' });
      expect(message.endsWith('\n')).toBe(true);
      expect(message.endsWith('\n\n')).toBe(false);
    }
  });
});

describe('commitMessage: git reads the trailers back', () => {
  let repo: TempGit;
  let tree: string;
  beforeAll(() => {
    repo = tempGit();
    tree = repo.git(['mktree'], '').trim();
  });
  afterAll(() => repo.remove());

  const env = {
    GIT_AUTHOR_NAME: 'cfghub',
    GIT_AUTHOR_EMAIL: 'cfghub@localhost',
    GIT_AUTHOR_DATE: '@1700000000 +0000',
    GIT_COMMITTER_NAME: 'cfghub',
    GIT_COMMITTER_EMAIL: 'cfghub@localhost',
    GIT_COMMITTER_DATE: '@1700000000 +0000',
  };

  function trailersOf(message: string): string {
    const commit = repo.git(['commit-tree', tree], message, env).trim();
    return repo.git(['log', '-1', '--format=%(trailers:only,unfold)', commit]).trim();
  }

  it('after a change comment', () => {
    const message = commitMessage('Set the port\n\nBecause.', {
      applicationName: 'deployer',
      tokenLabel: 'ci',
      clientVersion: 'v1.5',
    });
    expect(trailersOf(message)).toBe('Application-Name: deployer\nToken: ci\nClient-Version: v1.5');
  });

  it('an injected newline never makes a second trailer', () => {
    const message = commitMessage('c', { applicationName: 'x\nToken: forged' });
    expect(trailersOf(message)).toBe('Application-Name: x Token: forged');
  });

  it('without a change comment holds only the trailer lines', () => {
    expect(commitMessage(undefined, { applicationName: 'deployer', tokenLabel: 'ci' })).toBe(
      'Application-Name: deployer\nToken: ci\n',
    );
  });
});

describe('defaultPushSubject', () => {
  const key = (name: string) => ({ kind: 'key' as const, key: name });
  const file = (path: string) => ({ kind: 'file' as const, file: path, context: '*' });

  it('names the first keys and files, once each, and counts the rest', () => {
    expect(defaultPushSubject([key('db.host')])).toBe('Push: db.host');
    expect(defaultPushSubject([key('a'), file('conf/x'), key('a'), key('b')])).toBe('Push: a, conf/x, b');
    expect(defaultPushSubject([key('a'), key('b'), key('c'), key('d'), file('e'), file('e')])).toBe(
      'Push: a, b, c and 2 more',
    );
  });

  it('shortens a long name and never gives an empty subject', () => {
    expect(defaultPushSubject([key('k'.repeat(100))])).toBe(`Push: ${'k'.repeat(60)}…`);
    expect(defaultPushSubject([])).toBe('Push');
  });
});

describe('commitMessage: the comment never forges trailers', () => {
  it('a comment that ends like trailers gets the server block after it, even without provenance', () => {
    const forged = 'Ship\n\nToken: release-admin\nApplication-Name: release-bot';
    const message = commitMessage(forged, {});
    expect(message).toBe(`${forged}\n\nPushed-By: anonymous\n`);
    expect(parseCommitMessage(message)).toEqual({ comment: forged });
    expect(parseCommitMessage(commitMessage(forged, { applicationName: 'app' }))).toEqual({
      comment: forged,
      applicationName: 'app',
    });
    expect(commitMessage('t\n\n token : x', {})).toBe('t\n\n token : x\n\nPushed-By: anonymous\n');
  });

  it('adds nothing to a comment whose last lines name no trailer cfghub writes (a default subject)', () => {
    expect(commitMessage('Push: db.host', {})).toBe('Push: db.host\n');
    expect(commitMessage('Fix\n\nSee: the runbook', {})).toBe('Fix\n\nSee: the runbook\n');
  });

  it('parses a run of a million newlines (the backtracking /\\n+$/ took 1.9 s for 50,000; the test times out on it)', () => {
    expect(parseCommitMessage(`${'\n'.repeat(1_000_000)}x`).comment).toBe(`${'\n'.repeat(1_000_000)}x`);
  });
});
