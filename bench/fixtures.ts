/**
 * The repositories the scenarios run against.
 *
 * Push fixture: one cfghub repository seeded with N keys by one push, then copied (for the HTTP
 * server, so in-process and HTTP pushes never share a repository and each keeps its own warm
 * caches) and cloned bare (for the git plumbing reference, so all three start from the same tree;
 * the clone is made and pushed to by the reference's own process).
 *
 * Read fixture: one cfghub repository seeded with N keys by one push, token-free pull on, alone in
 * its repositories folder, for the pull scenarios (a server of its own reads it).
 *
 * Listing fixture: 1,000 small repositories, slow to create, so they are built once into
 * bench/.fixtures/<version>/ (ignored by git) and reused by later runs while they still read back
 * as expected.
 */
import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listRepositories } from '../src/service/read/listing.js';
import { push, type PushCaller } from '../src/service/write/push.js';
import { createRepository } from '../src/service/admin/repositories.js';
import { TokenService } from '../src/service/admin/tokens.js';
import { RepositoryRegistry } from '../src/disk/registry.js';
import type { GitRepository } from '../src/disk/repository.js';
import { TokenStore } from '../src/disk/records/tokenStore.js';
import { GitPlumbingProcess } from './gitPlumbingProcess.js';
import { makeTempFolder } from './tempFolders.js';
import { CONTEXT_LEVELS, KeyWorkload, type PullContext, type PushPayload, type WorkloadOptions } from './workload.js';

export const BENCH_ACCOUNT = 'bench';
/** Who the in-process pushes come from; the HTTP pushes carry no token either. */
export const BENCH_CALLER: PushCaller = { forceKeyPush: false, applicationName: 'cfghub-bench' };

export type Log = (message: string) => void;

async function pushOrThrow(repository: GitRepository, payload: PushPayload): Promise<void> {
  const result = await push(repository, payload.request, BENCH_CALLER);
  if (result.kind !== 'applied')
    throw new Error(`seeding ${repository.fullName} did not apply: ${JSON.stringify(result)}`);
}

// --- push fixture ------------------------------------------------------------------------------

export interface PushFixture {
  readonly keyCount: number;
  /** The fixture's temporary folder, on the same disk as its repositories. */
  readonly folder: string;
  /** The repositories folder the HTTP server serves. */
  readonly reposRoot: string;
  /** The repository pushed to in-process, from this process's own registry. */
  readonly inProcess: GitRepository;
  /** The name of the repository pushed to over HTTP, in account BENCH_ACCOUNT. */
  readonly httpRepository: string;
  readonly httpGitdir: string;
  /** The git plumbing reference, in its own process. */
  readonly reference: GitPlumbingProcess;
  readonly workload: KeyWorkload;
  /** Stops the reference's process (the folder goes with the other temporary folders). */
  close(): Promise<void>;
}

export async function preparePushFixture(keyCount: number, log: Log): Promise<PushFixture> {
  const folder = makeTempFolder(`push-${keyCount}`);
  const reposRoot = join(folder, 'repos');
  // As `cfghub serve` commits: through the push journal (src/disk/journal/pushJournal.ts).
  const registry = new RepositoryRegistry(reposRoot, { journal: true });
  const inProcess = await createRepository(registry, {
    account: BENCH_ACCOUNT,
    name: 'inprocess',
    levels: [...CONTEXT_LEVELS],
    description: `bench push fixture, ${keyCount} keys`,
    tokenFreePush: true,
  });
  const workload = new KeyWorkload(keyCount);
  const started = performance.now();
  await pushOrThrow(inProcess, workload.seedPayload());
  log(
    `seeded ${keyCount} keys in one push in ${Math.round(performance.now() - started)} ms (mean document ${Math.round(workload.meanDocumentBytes())} B)`,
  );

  const httpRepository = 'http';
  const httpGitdir = join(reposRoot, BENCH_ACCOUNT, `${httpRepository}.git`);
  cpSync(inProcess.gitdir, httpGitdir, { recursive: true });
  const reference = await GitPlumbingProcess.cloneFrom(inProcess.gitdir, folder);
  return {
    keyCount,
    folder,
    reposRoot,
    inProcess,
    httpRepository,
    httpGitdir,
    reference,
    workload,
    close: () => reference.close(),
  };
}

// --- read fixture ------------------------------------------------------------------------------

export interface ReadFixture {
  readonly keyCount: number;
  /** The repositories folder, holding only this repository. */
  readonly reposRoot: string;
  readonly account: string;
  readonly repository: string;
  /** The context the scenarios pull with: fully qualified, resolving the most keys. */
  readonly context: PullContext;
  /** `/rest/pull/{account}/{repository}`, token-free. */
  readonly pullPath: string;
}

export async function prepareReadFixture(keyCount: number, options: WorkloadOptions, log: Log): Promise<ReadFixture> {
  const folder = makeTempFolder(`read-${keyCount}`);
  const reposRoot = join(folder, 'repos');
  const name = 'pull';
  const repository = await createRepository(new RepositoryRegistry(reposRoot), {
    account: BENCH_ACCOUNT,
    name,
    levels: [...CONTEXT_LEVELS],
    description: `bench read fixture, ${keyCount} keys`,
    tokenFreePull: true,
  });
  const workload = new KeyWorkload(keyCount, options);
  const started = performance.now();
  await pushOrThrow(repository, workload.seedPayload());
  const context = workload.busiestContext();
  log(
    `read fixture: seeded ${keyCount} keys in ${Math.round(performance.now() - started)} ms; ${context.text} resolves ${context.resolvedKeys} of them`,
  );
  return {
    keyCount,
    reposRoot,
    account: BENCH_ACCOUNT,
    repository: name,
    context,
    pullPath: `/rest/pull/${BENCH_ACCOUNT}/${name}`,
  };
}

// --- listing fixture ---------------------------------------------------------------------------

/** Bump when the fixture's content changes, so stale fixtures are never reused. */
export const LISTING_FIXTURE_VERSION = 'listing-v2';
export const LISTING_REPOSITORIES = 1000;
const LISTING_ACCOUNTS = 10;
const KEYS_PER_REPOSITORY = 5;
/** Distinct repositories created and pushed to; the rest are copies of them under other names. */
const LISTING_SEEDS = 20;

const FIXTURES = fileURLToPath(new URL('./.fixtures/', import.meta.url));

export interface ListingFixture {
  readonly reposRoot: string;
  readonly reused: boolean;
}

/** The cached listing fixture, built first if it is missing or no longer reads back as built. */
export async function listingFixture(log: Log): Promise<ListingFixture> {
  const folder = join(FIXTURES, LISTING_FIXTURE_VERSION);
  const reposRoot = join(folder, 'repos');
  if (existsSync(reposRoot)) {
    const problem = await checkListingFixture(reposRoot);
    if (!problem) return { reposRoot, reused: true };
    log(`cached listing fixture is unusable (${problem}); rebuilding it`);
    rmSync(folder, { recursive: true, force: true });
  }
  const started = performance.now();
  await buildListingFixture(folder, log);
  log(
    `built the listing fixture (${LISTING_REPOSITORIES} repositories) in ${Math.round((performance.now() - started) / 1000)} s`,
  );
  const problem = await checkListingFixture(reposRoot);
  if (problem) throw new Error(`the freshly built listing fixture is wrong: ${problem}`);
  return { reposRoot, reused: false };
}

/** Why the fixture cannot be used (for example the layout changed since it was built), or undefined. */
async function checkListingFixture(reposRoot: string): Promise<string | undefined> {
  const unreadable: string[] = [];
  const { records } = await listRepositories(
    new RepositoryRegistry(reposRoot),
    new TokenService(new TokenStore(reposRoot)),
    (name) => unreadable.push(name),
  );
  if (unreadable.length > 0) return `${unreadable.length} repositories unreadable, e.g. ${unreadable[0]}`;
  if (records.length !== LISTING_REPOSITORIES)
    return `${records.length} repositories instead of ${LISTING_REPOSITORIES}`;
  const odd = records.find((record) => !('keyCount' in record) || record.keyCount !== KEYS_PER_REPOSITORY);
  if (odd)
    return `${odd.account}/${odd.name} has ${'keyCount' in odd ? odd.keyCount : 'no'} keys instead of ${KEYS_PER_REPOSITORY}`;
  return undefined;
}

/**
 * Builds into a temporary sibling folder and renames it into place, so a half-built fixture is
 * never reused. A few distinct repositories are made through cfghub, and copied under the other
 * names: the listing reads every repository all the same, and copying keeps a first run of
 * `npm run bench -- --quick` within its two minutes.
 */
async function buildListingFixture(folder: string, log: Log): Promise<void> {
  mkdirSync(FIXTURES, { recursive: true });
  const building = join(FIXTURES, `.building-${process.pid}`);
  rmSync(building, { recursive: true, force: true });
  const reposRoot = join(building, 'repos');
  const registry = new RepositoryRegistry(reposRoot);
  try {
    const seeds: GitRepository[] = [];
    for (let i = 0; i < LISTING_SEEDS; i++) {
      const repository = await createRepository(registry, {
        account: 'seeds',
        name: `seed${i}`,
        levels: [...CONTEXT_LEVELS],
        description: `listing fixture repository ${i}`,
      });
      await pushOrThrow(repository, new KeyWorkload(KEYS_PER_REPOSITORY, { seed: i + 1 }).seedPayload());
      seeds.push(repository);
    }
    for (let i = 0; i < LISTING_REPOSITORIES; i++) {
      const account = `team${String(i % LISTING_ACCOUNTS).padStart(2, '0')}`;
      cpSync(seeds[i % LISTING_SEEDS].gitdir, join(reposRoot, account, `config${String(i).padStart(4, '0')}.git`), {
        recursive: true,
      });
    }
    rmSync(join(reposRoot, 'seeds'), { recursive: true, force: true });
    log(`listing fixture: ${LISTING_REPOSITORIES} repositories from ${LISTING_SEEDS} distinct ones`);
    renameSync(building, folder);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    throw error;
  }
}
