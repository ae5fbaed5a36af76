/**
 * A replica's mirrors: ordinary bare repositories, laid out as the primary lays out its own
 * (`<repos>/<account>/<name>.git`), kept current by git's own `git fetch` over the primary's
 * smart HTTP route.
 *
 * Why the fetch is safe for readers: objects land first (a pack), and only then does `--atomic`
 * move every ref in one transaction, each by git's lock-and-rename, which the head watch
 * (changeWatch.ts) sees as an event in `refs/heads`. A reader sees the old head or the new one,
 * never a head whose objects are missing. A new mirror is fetched in a temporary folder and
 * renamed into place whole; a mirror the primary no longer lists is set aside in
 * `.cfghub/deleted`, as the primary sets aside a deleted repository.
 *
 * Why it survives a power cut: git is told to fsync everything it writes (`core.fsync=all`, with
 * the `fsync` method) and to keep every fetch as a pack (`fetch.unpackLimit=1`: no loose objects
 * in new fan-out folders), and the folders that received new entries are fsynced after the fetch,
 * which git does not do. So a ref that reached the disk names objects that reached it too.
 *
 * Why a branch never goes backwards: the branches are fetched without `+`, so git refuses a
 * non-fast-forward move (with `--atomic`, the whole fetch of that repository). The replicator
 * reports it; only when the operator accepts a new primary is the move forced, the old head kept
 * under `refs/cfghub/rewound/<time>/<branch>`.
 */
import { join } from 'node:path';
import { isValidName } from '../../domain/names.js';
import { assembleBareRepository, removeUnfinished, temporaryIn } from '../../disk/createRepository.js';
import { fsyncFolder, fsyncIfThere } from '../../disk/durableFs.js';
import { branchesAndTags, looseRefExists } from '../../disk/refs/refs.js';
import { CHANGE_REF_FOLDERS } from '../../disk/repository.js';
import { gitEnvironment, killGitTree, runGit, spawnGit } from '../../disk/gitCli/gitCommand.js';
import { setAside } from '../../disk/setAside.js';
import { withoutTrailingSlashes } from '../../lib/urls.js';

/** Where mirrors are assembled: inside the repositories folder, on its file system. */
const WORK_FOLDER = join('.cfghub', 'replica-work');
/** A fetch that takes longer than this is stopped (and retried by the next round). */
const FETCH_TIMEOUT_MS = 120_000;
/** Where the heads a forced fetch moved backwards are kept. */
export const REWOUND_PREFIX = 'refs/cfghub/rewound/';
/**
 * Where an HA cluster's node keeps the commits it holds that the cluster never acknowledged (a
 * push its leader journaled or sent, then died or lost its place before answering 200): moved
 * aside, never deleted, when its branch follows the elected leader's.
 */
export const ORPHANED_PREFIX = 'refs/cfghub/orphaned/';

export interface MirrorSource {
  /** The primary's base URL, `http://host:port`. */
  readonly primary: string;
  readonly token: string;
}

/** What a fetch did: fetched, or refused because a branch would have moved backwards. */
export type FetchOutcome = 'fetched' | 'rewind-refused';

/** The folders a fetch adds entries to, fsynced after it (git fsyncs files, not folders). */
const FETCHED_FOLDERS = ['objects/pack', 'refs/heads', 'refs/tags', 'refs', '.'];

/**
 * Runs `git fetch` of every branch and tag (and change request refs) into a bare repository, durably. Branches move only
 * forward unless `rewind` is set (the operator accepted a new primary); tags follow the primary.
 * Rejects with git's first error line, never the token.
 */
export async function fetchMirror(
  gitdir: string,
  source: MirrorSource,
  account: string,
  name: string,
  rewind = false,
  signal?: AbortSignal,
): Promise<FetchOutcome> {
  const url = `${withoutTrailingSlashes(source.primary)}/git/${encodeURIComponent(account)}/${encodeURIComponent(name)}.git`;
  const credential = Buffer.from(`replica:${source.token}`).toString('base64');
  const config: Array<[string, string]> = [
    ['http.extraHeader', `Authorization: Basic ${credential}`],
    ['credential.helper', ''],
    // Protocol v0: two HTTP requests a fetch (the ref advertisement, then the pack) where v2
    // takes three (capabilities, ls-refs, fetch); every request costs the primary a
    // `git http-backend` and a `git upload-pack` process, the bulk of replication lag. v2's
    // gain, advertising only the refs asked for, is none here: a mirror asks for them all.
    ['protocol.version', '0'],
    // Durable: every file git writes fsynced, every fetch kept as one pack (see above).
    ['core.fsync', 'all'],
    ['core.fsyncMethod', 'fsync'],
    ['fetch.unpackLimit', '1'],
    // Never follow a redirect: the Authorization header would go wherever it points.
    ['http.followRedirects', 'false'],
    // No `git gc --auto` after the fetch: it detaches and repacks in the background, outside the
    // repository's writers' queue, beside the next fetch or (in an HA member) the apply of a
    // leader's record. The packs a fetch adds are merged by cfghub's own merge, in the queue.
    ['gc.auto', '0'],
    ['maintenance.auto', 'false'],
  ];
  const branches = `${rewind ? '+' : ''}refs/heads/*:refs/heads/*`;
  const child = await spawnGit(
    [
      '--git-dir',
      gitdir,
      'fetch',
      '--atomic',
      '--prune',
      '--no-write-fetch-head',
      url,
      branches,
      '+refs/tags/*:refs/tags/*',
      // Change requests and their reviews follow the primary as tags do (a replica promoted holds them).
      ...CHANGE_REF_FOLDERS.map((folder) => `+${folder}/*:${folder}/*`),
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      // The token goes in the environment, not the command line other users can list.
      env: gitEnvironment({
        GIT_TERMINAL_PROMPT: '0',
        GIT_CONFIG_NOSYSTEM: '1',
        LC_ALL: 'C', // git's messages in English: a refused rewind is told by its text
        GIT_CONFIG_COUNT: String(config.length),
        ...Object.fromEntries(
          config.flatMap(([key, value], i) => [
            [`GIT_CONFIG_KEY_${i}`, key],
            [`GIT_CONFIG_VALUE_${i}`, value],
          ]),
        ),
      }),
    },
  );
  let firstError = '';
  let nonFastForward = false;
  let pending = '';
  const line = (text: string) => {
    if (text.includes('(non-fast-forward)')) nonFastForward = true;
    if (!firstError && /^(fatal|error): ./.test(text)) firstError = text;
  };
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    pending += text;
    const lines = pending.split('\n');
    pending = lines.pop()!.slice(-4096);
    for (const each of lines) line(each);
  });
  const timer = setTimeout(() => killGitTree(child, 'SIGTERM'), FETCH_TIMEOUT_MS);
  // A follower that stops (its primary changed) ends its fetch at once, its transport processes
  // too (they hold the queue's turn while they wait on a paused primary): with --atomic no ref has moved.
  const stop = () => killGitTree(child, 'SIGKILL');
  signal?.addEventListener('abort', stop);
  if (signal?.aborted) stop();
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  signal?.removeEventListener('abort', stop);
  line(pending);
  if (code !== 0) {
    if (nonFastForward && !rewind) return 'rewind-refused';
    throw new Error(
      `git fetch of ${account}/${name} failed (exit ${code}): ${firstError.split(source.token).join('…').slice(0, 300)}`,
    );
  }
  for (const folder of CHANGE_REF_FOLDERS) await fsyncIfThere(join(gitdir, folder)); // none before a change request
  for (const folder of FETCHED_FOLDERS) await fsyncFolder(join(gitdir, folder));
  return 'fetched';
}

/** Removes what a replica stopped mid-fetch left of new mirrors (never a mirror in place): at the follower's start. */
export async function clearUnfinishedMirrors(root: string): Promise<void> {
  await removeUnfinished(join(root, WORK_FOLDER));
}

/**
 * Keeps every branch of a mirror under `<prefix><stamp>/` (`refs/cfghub/rewound/` by default),
 * before a fetch that moves them backwards. The stamp counts milliseconds: two keeps never share a name.
 */
export async function keepRewoundHeads(gitdir: string, prefix = REWOUND_PREFIX): Promise<string> {
  let stamp = new Date().toISOString().replace(/[-:.]/g, '');
  while (looseRefExists(gitdir, `${prefix}${stamp}`)) stamp = `${stamp.slice(0, -1)}1Z`;
  for (const [ref, oid] of branchesAndTags(gitdir)) {
    if (ref.startsWith('refs/heads/'))
      await runGit(gitdir, [
        '-c',
        'core.fsync=all',
        '-c',
        'core.fsyncMethod=fsync',
        'update-ref',
        `${prefix}${stamp}/${ref.slice('refs/heads/'.length)}`,
        oid,
      ]);
  }
  for (const folder of [`${prefix}${stamp}`, prefix, 'refs/cfghub', 'refs']) await fsyncFolder(join(gitdir, folder));
  return `${prefix}${stamp}/`;
}

/** Makes a mirror of a repository the replica does not have yet: assembled aside, fetched, renamed into place. */
export async function createMirror(
  root: string,
  source: MirrorSource,
  account: string,
  name: string,
  signal?: AbortSignal,
): Promise<void> {
  if (!isValidName(account) || !isValidName(name))
    throw new Error(`the primary offered a repository with an invalid name`);
  await assembleBareRepository(
    join(root, account, `${name}.git`),
    temporaryIn(join(root, WORK_FOLDER), 'new-'),
    (folder) => fetchMirror(folder, source, account, name, false, signal).then(() => undefined),
  );
}

/** Sets aside a mirror the primary no longer lists, as the primary sets aside a deleted repository. */
export async function removeMirror(root: string, account: string, name: string, gitdir: string): Promise<void> {
  await setAside(root, account, name, gitdir);
}

/** Whether `ancestor` is `head` or one of its ancestors, by git itself. */
export async function isAncestor(gitdir: string, ancestor: string, head: string): Promise<boolean> {
  const child = await spawnGit(['--git-dir', gitdir, 'merge-base', '--is-ancestor', ancestor, head], {
    stdio: 'ignore',
    env: gitEnvironment({}),
  });
  return (await new Promise<number | null>((resolve) => child.on('close', resolve))) === 0;
}
