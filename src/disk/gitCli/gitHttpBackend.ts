/**
 * Serves one request of git's smart HTTP protocol (fetch and clone only) with git's own CGI
 * program, `git http-backend`: the request body streams into it, its header block (`Status:` and
 * headers, up to a blank line) becomes the HTTP status and headers, and the rest streams out.
 *
 * Nothing the client sent reaches git as a path: GIT_PROJECT_ROOT is the repository folder the
 * registry found (validated names, no symbolic links) and PATH_INFO one of two fixed endpoints.
 * receive-pack is also switched off in git's own configuration, so the route stays read-only
 * even if a request slipped past the adapter's refusal.
 */
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { gitEnvironment, spawnGit } from './gitCommand.js';

/** The two endpoints of a fetch: the ref advertisement and the pack negotiation. */
export type UploadPackEndpoint = 'info/refs' | 'git-upload-pack';

export interface UploadPackRequest {
  readonly gitdir: string;
  readonly endpoint: UploadPackEndpoint;
  readonly method: 'GET' | 'POST';
  readonly contentType?: string;
  /** `gzip` when the client compressed the body: http-backend inflates it itself. */
  readonly contentEncoding?: string;
  readonly contentLength?: string;
  /** The `Git-Protocol` header (`version=2`), checked by the caller. */
  readonly gitProtocol?: string;
  readonly remoteAddr?: string;
  readonly body: Readable;
}

export interface BackendOutcome {
  /** What git wrote on stderr (its own error messages), if anything. */
  readonly stderr: string;
  /** False when the client went away and git was stopped. */
  readonly completed: boolean;
}

const HEADER_END = /\r?\n\r?\n/;

export async function serveUploadPack(request: UploadPackRequest, response: ServerResponse): Promise<BackendOutcome> {
  const child = await spawnGit(['http-backend'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: gitEnvironment({
      GIT_PROJECT_ROOT: request.gitdir,
      PATH_INFO: `/${request.endpoint}`,
      QUERY_STRING: request.endpoint === 'info/refs' ? 'service=git-upload-pack' : '',
      REQUEST_METHOD: request.method,
      CONTENT_TYPE: request.contentType ?? '',
      CONTENT_LENGTH: request.contentLength,
      HTTP_CONTENT_ENCODING: request.contentEncoding,
      GIT_PROTOCOL: request.gitProtocol,
      HTTP_GIT_PROTOCOL: request.gitProtocol,
      REMOTE_ADDR: request.remoteAddr,
      GIT_HTTP_EXPORT_ALL: '1',
      // git's own switch, besides the adapter's 403: this route never accepts a push.
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.receivepack',
      GIT_CONFIG_VALUE_0: 'false',
    }),
  });

  let stopped = false;
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) {
      stopped = true;
      child.kill('SIGTERM');
    }
  };
  response.on('close', () => {
    if (!response.writableFinished) stop();
  });

  child.stdin!.on('error', () => undefined); // git may stop reading early (a refused request)
  request.body.on('error', stop);
  request.body.pipe(child.stdin!);

  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    if (stderr.length < 4096) stderr += text;
  });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));

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
