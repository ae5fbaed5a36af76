/**
 * Serves one request of git's smart HTTP protocol with git's own CGI program, `git http-backend`:
 * the request body streams into it, its header block (`Status:` and headers, up to a blank line)
 * becomes the HTTP status and headers, and the rest streams out.
 *
 * Nothing the client sent reaches git as a path: GIT_PROJECT_ROOT is the repository folder the
 * registry found (validated names, no symbolic links) or a push's staging repository
 * (receivePack.ts), and PATH_INFO one of two fixed endpoints. A served repository only ever
 * answers fetches: receive-pack is switched off in git's own configuration for it, and runs only
 * in a staging repository, whose hook asks the server.
 */
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { gitEnvironment, spawnGit } from './gitCommand.js';

/** The two endpoints of a fetch: the ref advertisement and the pack negotiation. */
export type UploadPackEndpoint = 'info/refs' | 'git-upload-pack';
/** The two endpoints of a push. */
export type ReceivePackEndpoint = 'info/refs' | 'git-receive-pack';

export type GitServiceRequest =
  | (BackendRequest & { readonly service: 'git-upload-pack'; readonly endpoint: UploadPackEndpoint })
  | (BackendRequest & {
      readonly service: 'git-receive-pack';
      readonly endpoint: ReceivePackEndpoint;
      /** The staging repository's variables for its hook (receivePack.ts). */
      readonly env: Record<string, string>;
    });

interface BackendRequest {
  readonly gitdir: string;
  readonly method: 'GET' | 'POST';
  readonly contentType?: string;
  /** `gzip` when the client compressed the body: http-backend inflates it itself. */
  readonly contentEncoding?: string;
  readonly contentLength?: string;
  /** The `Git-Protocol` header (`version=2`), checked by the caller. */
  readonly gitProtocol?: string;
  readonly remoteAddr?: string;
  readonly body: Readable;
  /** Bytes of body git may read: past them git is stopped and the answer cut. */
  readonly maxBodyBytes?: number;
  /** How long git may run: then it is stopped and the answer cut. */
  readonly timeLimitMs?: number;
}

export interface BackendOutcome {
  /** What git wrote on stderr (its own error messages), if anything. */
  readonly stderr: string;
  /** False when the client went away and git was stopped. */
  readonly completed: boolean;
}

const HEADER_END = /\r?\n\r?\n/;

export async function serveGitService(request: GitServiceRequest, response: ServerResponse): Promise<BackendOutcome> {
  const pushing = request.service === 'git-receive-pack';
  const child = await spawnGit(['http-backend'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: gitEnvironment({
      ...(pushing ? request.env : {}),
      GIT_PROJECT_ROOT: request.gitdir,
      PATH_INFO: `/${request.endpoint}`,
      QUERY_STRING: request.endpoint === 'info/refs' ? `service=${request.service}` : '',
      REQUEST_METHOD: request.method,
      CONTENT_TYPE: request.contentType ?? '',
      CONTENT_LENGTH: request.contentLength,
      HTTP_CONTENT_ENCODING: request.contentEncoding,
      GIT_PROTOCOL: request.gitProtocol,
      HTTP_GIT_PROTOCOL: request.gitProtocol,
      REMOTE_ADDR: request.remoteAddr,
      GIT_HTTP_EXPORT_ALL: '1',
      // git's own switch: a served repository never takes a push, a staging repository only does.
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.receivepack',
      GIT_CONFIG_VALUE_0: pushing ? 'true' : 'false',
    }),
  });

  let stopped = false;
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) {
      stopped = true;
      child.kill('SIGTERM');
      // git's own child (upload-pack, receive-pack) shares these pipes: closing them ends it too.
      request.body.unpipe(child.stdin!);
      child.stdin!.destroy();
      child.stdout!.destroy();
    }
  };
  response.on('close', () => {
    if (!response.writableFinished) stop();
  });

  child.stdin!.on('error', () => undefined); // git may stop reading early (a refused request)
  request.body.on('error', stop);
  let received = 0;
  if (request.maxBodyBytes !== undefined) {
    const limit = request.maxBodyBytes;
    request.body.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) {
        stop();
        response.destroy();
      }
    });
  }
  const timer =
    request.timeLimitMs === undefined
      ? undefined
      : setTimeout(() => {
          stop();
          response.destroy();
        }, request.timeLimitMs);
  request.body.pipe(child.stdin!);

  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    if (stderr.length < 4096) stderr += text;
  });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve())).finally(() => clearTimeout(timer));

  const head = await readHead(child.stdout!);
  if (!head) {
    await exited;
    throw new Error(`git http-backend ended without an answer: ${stderr.trim().split('\n')[0] ?? ''}`);
  }
  response.writeHead(head.status, head.headers);
  if (head.rest.length > 0) response.write(head.rest);
  child.stdout!.pipe(response);
  await exited;
  return { stderr: stderr.trim(), completed: !stopped };
}

interface CgiHead {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** Body bytes read along with the header block. */
  readonly rest: Buffer;
}

/** Reads the CGI header block; undefined if the output ends before it does. */
function readHead(stdout: Readable): Promise<CgiHead | undefined> {
  return new Promise((resolve) => {
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const text = buffered.toString('latin1');
      const end = HEADER_END.exec(text);
      if (!end) return;
      stdout.off('data', onData);
      stdout.off('end', onEnd);
      stdout.pause();
      resolve({ ...parseHeaderBlock(text.slice(0, end.index)), rest: buffered.subarray(end.index + end[0].length) });
    };
    const onEnd = () => resolve(undefined);
    stdout.on('data', onData);
    stdout.once('end', onEnd);
  });
}

function parseHeaderBlock(block: string): { status: number; headers: Record<string, string> } {
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of block.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
    else headers[name] = value;
  }
  return { status, headers };
}
