/**
 * The git plumbing reference's own process (see gitPlumbingProcess.ts): holds one
 * GitPlumbingRepository and answers the parent's requests one at a time. It exits when the parent
 * disconnects.
 */
import { GitPlumbingRepository } from './gitPlumbing.js';
import type { PushTiming, SpawnFloor, WorkerReply, WorkerRequest } from './gitPlumbingProcess.js';
import { residentMiB, spawnFloor } from './probes.js';

let repository: GitPlumbingRepository | undefined;

async function handle(request: WorkerRequest): Promise<unknown> {
  switch (request.kind) {
    case 'clone':
      repository = await GitPlumbingRepository.cloneFrom(request.source, request.folder);
      return null;
    case 'push': {
      if (!repository) throw new Error('no repository: clone first');
      const t0 = performance.now();
      const tree = await repository.push(request.files, request.message);
      return { tree, ms: performance.now() - t0 } satisfies PushTiming;
    }
    case 'spawnFloor':
      return { summary: await spawnFloor(), residentMiB: residentMiB() } satisfies SpawnFloor;
  }
}

process.on('message', (message: { id: number; request: WorkerRequest }) => {
  handle(message.request).then(
    (value) => process.send!({ id: message.id, ok: true, value } satisfies WorkerReply),
    (error: unknown) =>
      process.send!({
        id: message.id,
        ok: false,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      } satisfies WorkerReply),
  );
});
