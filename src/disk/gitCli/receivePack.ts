/**
 * The disk side of `git push` over HTTP: git's own receive-pack takes the push, but never into a
 * served repository. Each push gets a staging repository of its own, in a private folder of the
 * process: its `objects/info/alternates` names the served repository's objects (so a thin pack
 * finds its bases and nothing is sent twice), its `main` is the served head, and its pre-receive
 * hook asks the server for a verdict over a Unix socket, with a one-time ticket. git runs the
 * hook with the push's objects in its quarantine (`objects/tmp_objdir-incoming-*`), which the
 * server reads; the server moves the served repository's ref itself (service/write/gitPush.ts).
 * When the hook says no, git removes the quarantine and tells the client why: the hook's output
 * becomes its `remote:` lines and the ref is reported rejected. The staging repository is
 * removed after each request, so nothing of a push, taken or refused, stays there.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { BRANCH_REF } from '../../layout/layout.js';

/** What the server answers the hook: whether the push may complete, and the lines git shows its user. */
export interface HookVerdict {
  readonly ok: boolean;
  readonly message: string;
}

/** Decides a push: receive-pack's command lines (`<old> <new> <ref>`) and the quarantine folder. */
export type VerdictHandler = (commands: string, quarantine: string) => Promise<HookVerdict>;

/** The hook's request: commands of a push are a few lines; anything longer is refused. */
const MAX_HOOK_REQUEST = 64 * 1024;

/** The pre-receive hook, run by node: sends its input and git's quarantine path, prints the verdict. */
const HOOK_SCRIPT = `'use strict';
const net = require('node:net');
const input = [];
const fail = (text) => { process.stderr.write('cfghub: ' + text + '\\n'); process.exitCode = 1; };
process.stdin.on('data', (chunk) => input.push(chunk));
process.stdin.on('end', () => {
  const socket = net.connect(process.env.CFGHUB_RECEIVE_SOCKET);
  socket.on('error', () => fail('the server gave no verdict on this push; push again'));
  socket.end(JSON.stringify({
    ticket: process.env.CFGHUB_RECEIVE_TICKET,
    quarantine: process.env.GIT_QUARANTINE_PATH || '',
    commands: Buffer.concat(input).toString('utf8'),
  }));
  const answer = [];
  socket.on('data', (chunk) => answer.push(chunk));
  socket.on('end', () => {
    let verdict;
    try { verdict = JSON.parse(Buffer.concat(answer).toString('utf8')); } catch { return fail('the server gave no verdict on this push; push again'); }
    if (verdict.message) process.stderr.write(verdict.message);
    process.exitCode = verdict.ok ? 0 : 1;
  });
});
`;

const shellQuoted = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
const configQuoted = (text: string) => `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** One per process: the private folder, the hook and the socket its runs call back on. */
class HookChannel {
  private readonly handlers = new Map<string, { handler: VerdictHandler; staging: string }>();
  readonly hooks: string;
  readonly socket: string;

  private constructor(
    readonly folder: string,
    private readonly server: Server,
  ) {
    this.hooks = join(folder, 'hooks');
    this.socket = join(folder, 'verdict.sock');
  }

  static async open(): Promise<HookChannel> {
    const folder = mkdtempSync(join(tmpdir(), 'cfghub-receive-'));
    chmodSync(folder, 0o700);
    process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
    const hooks = join(folder, 'hooks');
    mkdirSync(hooks);
    writeFileSync(join(folder, 'pre-receive.cjs'), HOOK_SCRIPT);
    writeFileSync(
      join(hooks, 'pre-receive'),
      `#!/bin/sh\nexec ${shellQuoted(process.execPath)} ${shellQuoted(join(folder, 'pre-receive.cjs'))}\n`,
      { mode: 0o700 },
    );
    let channel: HookChannel | undefined;
    const server = createServer({ allowHalfOpen: true }, (connection) => channel?.answer(connection));
    channel = new HookChannel(folder, server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(join(folder, 'verdict.sock'), () => resolve());
    });
    server.unref(); // never what keeps the process alive
    return channel;
  }

  /** A staging repository for one request, with its ticket for the hook. */
  stage(gitdir: string, head: string, maxInputSize: number, handler?: VerdictHandler): StagedReceive {
    const staging = mkdtempSync(join(this.folder, 'push-'));
    mkdirSync(join(staging, 'objects', 'info'), { recursive: true });
    mkdirSync(join(staging, 'objects', 'pack'));
    mkdirSync(join(staging, 'refs', 'heads'), { recursive: true });
    mkdirSync(join(staging, 'refs', 'tags'));
    writeFileSync(join(staging, 'HEAD'), `ref: ${BRANCH_REF}\n`);
    writeFileSync(join(staging, BRANCH_REF), `${head}\n`);
    writeFileSync(join(staging, 'objects', 'info', 'alternates'), `${join(gitdir, 'objects')}\n`);
    writeFileSync(
      join(staging, 'config'),
      [
        '[core]',
        '\trepositoryformatversion = 0',
        '\tbare = true',
        `\thooksPath = ${configQuoted(this.hooks)}`,
        '[receive]',
        '\tfsckObjects = true',
        '\tdenyDeletes = true',
        '\tdenyNonFastForwards = true',
        `\tmaxInputSize = ${maxInputSize}`,
        '[http]',
        '\treceivepack = true',
        '[gc]',
        '\tauto = 0',
        '',
      ].join('\n'),
    );
    const ticket = randomBytes(24).toString('base64url');
    if (handler) this.handlers.set(ticket, { handler, staging });
    return {
      gitdir: staging,
      env: { CFGHUB_RECEIVE_SOCKET: this.socket, CFGHUB_RECEIVE_TICKET: ticket },
      moveStagedHead: (commitId) => writeFileSync(join(staging, BRANCH_REF), `${commitId}\n`),
      remove: () => {
        this.handlers.delete(ticket);
        rmSync(staging, { recursive: true, force: true });
      },
    };
  }

  private answer(connection: Socket): void {
    const chunks: Buffer[] = [];
    let size = 0;
    connection.on('error', () => undefined);
    connection.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_HOOK_REQUEST) connection.destroy();
      else chunks.push(chunk);
    });
    connection.on('end', () => {
      void this.verdict(Buffer.concat(chunks).toString('utf8')).then(
        (verdict) => connection.end(JSON.stringify(verdict)),
        () => connection.end(JSON.stringify({ ok: false, message: 'cfghub: the push could not be decided\n' })),
      );
    });
  }

  private async verdict(text: string): Promise<HookVerdict> {
    const request = JSON.parse(text) as { ticket?: unknown; quarantine?: unknown; commands?: unknown };
    const entry = typeof request.ticket === 'string' ? this.handlers.get(request.ticket) : undefined;
    if (!entry || typeof request.commands !== 'string' || typeof request.quarantine !== 'string')
      return { ok: false, message: 'cfghub: this push is not one the server is taking\n' };
    this.handlers.delete(request.ticket as string); // one verdict per push
    // git's quarantine is a folder of the staging repository's objects, nothing else.
    // (given relative to the repository when git runs in it: the hook runs in the repository's folder.)
    const quarantine = resolve(entry.staging, request.quarantine);
    if (dirname(quarantine) !== join(entry.staging, 'objects') || !basename(quarantine).includes('incoming-'))
      return { ok: false, message: 'cfghub: the push came without its quarantine\n' };
    return entry.handler(request.commands, quarantine);
  }
}

/** A staging repository of one request: where git runs, and what it needs. */
export interface StagedReceive {
  readonly gitdir: string;
  /** The environment git passes on to the hook (socket and ticket). */
  readonly env: Record<string, string>;
  /** Sets the staging repository's `main`, so receive-pack's own update from the pushed old head goes through. */
  moveStagedHead(commitId: string): void;
  remove(): void;
}

let channel: Promise<HookChannel> | undefined;

/**
 * A staging repository for a push request on `gitdir` at `head`: for the ref advertisement
 * (no handler) or the push itself (the handler decides it when git runs the hook).
 */
export async function stageReceive(
  gitdir: string,
  head: string,
  maxInputSize: number,
  handler?: VerdictHandler,
): Promise<StagedReceive> {
  channel ??= HookChannel.open().catch((error: unknown) => {
    channel = undefined;
    throw error;
  });
  return (await channel).stage(gitdir, head, maxInputSize, handler);
}
