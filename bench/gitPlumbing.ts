/**
 * The reference implementation: the same push done with git's plumbing commands, driven from Node
 * the way a git-CLI-backed cfghub would drive them (one child process per command). The benchmark
 * runs it in a process of its own (gitPlumbingWorker.ts) so spawns are not slowed by the memory of
 * the other implementations.
 *
 * Per push: `hash-object -w --stdin-paths` for the changed blobs, `update-index --index-info` on
 * an index file kept between pushes (read once with `read-tree` at setup, so no push pays for it),
 * `write-tree`, `commit-tree`, and `update-ref <new> <old>` (git's own compare-and-swap).
 * Durability: `core.fsync=all` and `core.fsyncMethod=fsync` are set in the repository's config,
 * so git fsyncs objects, the index and the ref, as cfghub does for its objects and ref.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FileChange } from './workload.js';

export const BRANCH_REF = 'refs/heads/main';

/** The durability settings written into the reference repository, shown in the report. */
export const GIT_DURABILITY: Readonly<Record<string, string>> = {
  'core.fsync': 'all',
  'core.fsyncMethod': 'fsync',
};

/** Fixed identity and date, so git needs no user configuration and commits are reproducible. */
const COMMIT_ENV = {
  GIT_AUTHOR_NAME: 'cfghub-bench',
  GIT_AUTHOR_EMAIL: 'bench@localhost',
  GIT_COMMITTER_NAME: 'cfghub-bench',
  GIT_COMMITTER_EMAIL: 'bench@localhost',
};

export interface GitRun {
  readonly input?: string;
  readonly env?: Readonly<Record<string, string>>;
}

/** Runs git with `args`; resolves to its stdout, rejects with its stderr on a non-zero exit. */
export function runGit(args: readonly string[], options: GitRun = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      env: { ...process.env, ...options.env },
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    // stdout and stderr are always pipes here (only stdin varies), so they are never null.
    child.stdout!.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => err.push(chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else reject(new Error(`git ${args.join(' ')} exited ${code}: ${Buffer.concat(err).toString('utf8').trim()}`));
    });
    if (child.stdin) {
      // A git that exits without reading its input closes the pipe: its exit code tells why, not EPIPE.
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.input);
    }
  });
}

export async function gitVersion(): Promise<string> {
  return (await runGit(['--version'])).trim().replace(/^git version /, '');
}

export class GitPlumbingRepository {
  private constructor(
    readonly gitdir: string,
    /** The kept index file (GIT_INDEX_FILE). */
    private readonly indexFile: string,
    /** Where changed blobs are written for `hash-object --stdin-paths`. */
    private readonly scratch: string,
    private head: string,
  ) {}

  /**
   * Makes the reference repository: a bare clone of `source` (so its tree is identical to the
   * cfghub repository's), made durable by config, with its index read once.
   */
  static async cloneFrom(source: string, folder: string): Promise<GitPlumbingRepository> {
    const gitdir = join(folder, 'reference.git');
    await runGit(['clone', '--bare', '--quiet', source, gitdir]);
    for (const [name, value] of Object.entries(GIT_DURABILITY))
      await runGit(['--git-dir', gitdir, 'config', name, value]);
    // cfghub never packs or gcs during a push; neither may git.
    await runGit(['--git-dir', gitdir, 'config', 'gc.auto', '0']);
    const indexFile = join(folder, 'reference.index');
    const scratch = join(folder, 'reference-scratch');
    mkdirSync(scratch, { recursive: true });
    const head = (await runGit(['--git-dir', gitdir, 'rev-parse', BRANCH_REF])).trim();
    await runGit(['--git-dir', gitdir, 'read-tree', head], { env: { GIT_INDEX_FILE: indexFile } });
    return new GitPlumbingRepository(gitdir, indexFile, scratch, head);
  }

  /** One push: writes the changed files, commits them on the head, moves the ref. Returns the new tree. */
  async push(files: readonly FileChange[], message: string): Promise<string> {
    // The same scratch names every push: overwriting a file is cheaper than creating one.
    const paths = files.map((file, i) => {
      const path = join(this.scratch, `blob-${i}`);
      writeFileSync(path, file.content);
      return path;
    });
    const git = ['--git-dir', this.gitdir];
    const withIndex = { GIT_INDEX_FILE: this.indexFile };
    const oids = (
      await runGit([...git, 'hash-object', '-w', '--no-filters', '--stdin-paths'], { input: `${paths.join('\n')}\n` })
    )
      .trim()
      .split('\n');
    const indexInfo = files.map((file, i) => `100644 blob ${oids[i]}\t${file.path}\n`).join('');
    await runGit([...git, 'update-index', '--add', '--index-info'], { input: indexInfo, env: withIndex });
    const tree = (await runGit([...git, 'write-tree'], { env: withIndex })).trim();
    const commit = (
      await runGit([...git, 'commit-tree', tree, '-p', this.head, '-m', message], { env: COMMIT_ENV })
    ).trim();
    await runGit([...git, 'update-ref', BRANCH_REF, commit, this.head]);
    this.head = commit;
    return tree;
  }
}
