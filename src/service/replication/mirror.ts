/**
 * A replica's mirrors (issue 21): ordinary bare repositories, laid out as the primary lays out its
 * own (`<repos>/<account>/<name>.git`), kept current by git's own `git fetch` over the primary's
 * smart HTTP route.
 *
 * Why the fetch is safe for readers: objects land first (a pack, or loose objects), and only then
 * does `--atomic` move every ref in one transaction, each by git's lock-and-rename, which the head
 * watch (changeWatch.ts) sees as an event in `refs/heads`. A reader sees the old head or the new
 * one, never a head whose objects are missing. A new mirror is fetched in a temporary folder and
 * renamed into place whole; a mirror the primary no longer has is renamed away, then removed.
 */
import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { isValidName } from '../../domain/names.js';
import { gitEnvironment, spawnGit } from '../../disk/gitCommand.js';
import { BRANCH_REF } from '../../layout/layout.js';

/** Where mirrors are assembled and removed from: inside the repositories folder, on its file system. */
const WORK_FOLDER = join('.cfghub', 'replica-work');
/** A fetch that takes longer than this is stopped (and retried by the next round). */
const FETCH_TIMEOUT_MS = 120_000;

export interface MirrorSource {
  /** The primary's base URL, `http://host:port`. */
  readonly primary: string;
  readonly token: string;
}

/** Runs `git fetch` of every branch and tag into a bare repository; rejects with git's first error line, never the token. */
export async function fetchMirror(gitdir: string, source: MirrorSource, account: string, name: string): Promise<void> {
  const url = `${source.primary.replace(/\/+$/, '')}/git/${encodeURIComponent(account)}/${encodeURIComponent(name)}.git`;
  const credential = Buffer.from(`replica:${source.token}`).toString('base64');
  const child = await spawnGit(
    ['--git-dir', gitdir, 'fetch', '--atomic', '--prune', '--no-write-fetch-head', '--quiet', url, '+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      // The token goes in the environment, not the command line other users can list.
      env: gitEnvironment({
        GIT_TERMINAL_PROMPT: '0',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_COUNT: '3',
        GIT_CONFIG_KEY_0: 'http.extraHeader',
        GIT_CONFIG_VALUE_0: `Authorization: Basic ${credential}`,
        GIT_CONFIG_KEY_1: 'credential.helper',
        GIT_CONFIG_VALUE_1: '',
        // Protocol v0: two HTTP requests a fetch (the ref advertisement, then the pack) where v2
        // takes three (capabilities, ls-refs, fetch); every request costs the primary a
        // `git http-backend` and a `git upload-pack` process, the bulk of replication lag. v2's
        // gain, advertising only the refs asked for, is none here: a mirror asks for them all.
        GIT_CONFIG_KEY_2: 'protocol.version',
        GIT_CONFIG_VALUE_2: '0',
      }),
    },
  );
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    if (stderr.length < 4096) stderr += text;
  });
  const timer = setTimeout(() => child.kill('SIGTERM'), FETCH_TIMEOUT_MS);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  if (code !== 0) {
    const line = stderr.trim().split('\n')[0] ?? '';
    throw new Error(`git fetch of ${account}/${name} failed (exit ${code}): ${line.split(source.token).join('…')}`);
  }
}

/** Makes a mirror of a repository the replica does not have yet: assembled aside, fetched, renamed into place. */
export async function createMirror(root: string, source: MirrorSource, account: string, name: string): Promise<void> {
  if (!isValidName(account) || !isValidName(name)) throw new Error(`the primary offered a repository with an invalid name`);
  const work = join(root, WORK_FOLDER);
  await fs.promises.mkdir(work, { recursive: true, mode: 0o700 });
  const temporary = join(work, `new-${randomBytes(6).toString('hex')}`);
  try {
    await fs.promises.mkdir(join(temporary, 'objects'), { recursive: true });
    await fs.promises.mkdir(join(temporary, 'refs', 'heads'), { recursive: true });
    await fs.promises.mkdir(join(temporary, 'refs', 'tags'), { recursive: true });
    await fs.promises.writeFile(join(temporary, 'HEAD'), `ref: ${BRANCH_REF}\n`);
    await fs.promises.writeFile(join(temporary, 'config'), '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n');
    await fetchMirror(temporary, source, account, name);
    const accountDir = join(root, account);
    await fs.promises.mkdir(accountDir, { recursive: true });
    await fs.promises.rename(temporary, join(accountDir, `${name}.git`));
  } finally {
    await fs.promises.rm(temporary, { recursive: true, force: true });
  }
}

/** Removes a mirror the primary no longer has: renamed out of the folder first, so readers see it whole or not at all. */
export async function removeMirror(root: string, gitdir: string): Promise<void> {
  const work = join(root, WORK_FOLDER);
  await fs.promises.mkdir(work, { recursive: true, mode: 0o700 });
  const aside = join(work, `gone-${randomBytes(6).toString('hex')}`);
  await fs.promises.rename(gitdir, aside);
  await fs.promises.rm(aside, { recursive: true, force: true });
}

/** Whether `ancestor` is `head` or one of its ancestors, by git itself. */
export async function isAncestor(gitdir: string, ancestor: string, head: string): Promise<boolean> {
  const child = await spawnGit(['--git-dir', gitdir, 'merge-base', '--is-ancestor', ancestor, head], { stdio: 'ignore', env: gitEnvironment({}) });
  return (await new Promise<number | null>((resolve) => child.on('close', resolve))) === 0;
}
