/**
 * Fault points of the write path, for the crash tests: `CFGHUB_FAULT=<step>` makes the process
 * kill itself with SIGKILL the first time a push reaches that step, as a power cut or an
 * out-of-memory kill would. The variable is read once, at load; when it is unset, `faultPoint`
 * is an empty function, so the write path pays nothing for it.
 *
 * With `CFGHUB_FAULT_ARMED_BY=SIGUSR2` the step kills the process only once it has received
 * SIGUSR2: a test then chooses the moment (the node that leads now) without restarting the node.
 */

/**
 * The steps of a push's commit, in the order one push passes them. A server's push is journaled
 * (pushJournal.ts): its pack, index and lock are written without fsyncs, and its journal record is
 * the one fdatasync; a command's push fsyncs them, as the comments say.
 */
export const FAULT_STEPS = [
  'objects-written', // the pack and its index are in (fsynced) temporary files, not yet renamed into place
  'objects-synced', // the pack and its index are each (fsynced and) renamed into place; their folder is not yet fsynced
  'lock-taken', // `<ref>.lock` holds the new commit id (fsynced); the objects are in place (their folder's fsync
  //               comes with the ref folder's, after the rename, or with the journal's checkpoint); the ref is untouched
  'journaled', // a server's push (pushJournal.ts): the journal's record of the commit is durable, the ref not yet
  //              renamed (the next start's replay moves it); a push not journaled never passes here
  'ref-renamed', // the lock has been renamed over the ref; neither the ref's folder nor the pack folder is fsynced yet
  'lock-released', // the ref is moved, and its folder and the pack folder fsynced (or the journal's record durable);
  //                  the push has not been answered yet
] as const;

/**
 * The steps an HA cluster's leader adds to a push (service/ha/syncSet.ts), between its journal's
 * record being durable and its own ref's move: only a leader with a sync set passes them.
 */
export const CLUSTER_FAULT_STEPS = [
  'record-journaled', // the record is written in the leader's journal (its fdatasync under way); no member has been sent it yet
  'replicating', // the record is durable in the leader's journal and one member of the sync set has
  //                applied and acknowledged it; the other members' answers and the leader's ref move are pending
] as const;

export type FaultStep = (typeof FAULT_STEPS)[number] | (typeof CLUSTER_FAULT_STEPS)[number];

function armedStep(value: string | undefined): FaultStep | undefined {
  if (!value) return undefined;
  const steps: readonly string[] = [...FAULT_STEPS, ...CLUSTER_FAULT_STEPS];
  if (!steps.includes(value)) throw new Error(`CFGHUB_FAULT must be one of ${steps.join(', ')}`);
  return value as FaultStep;
}

function armedBySignal(value: string | undefined): boolean {
  if (!value) return false;
  if (value !== 'SIGUSR2') throw new Error('CFGHUB_FAULT_ARMED_BY can only be SIGUSR2');
  return true;
}

const armed = armedStep(process.env.CFGHUB_FAULT);
let live = armed !== undefined && !armedBySignal(process.env.CFGHUB_FAULT_ARMED_BY);
if (armed && !live) process.on('SIGUSR2', () => (live = true));

export const faultPoint: (step: FaultStep) => void = armed
  ? (step) => {
      if (live && step === armed) process.kill(process.pid, 'SIGKILL');
    }
  : () => undefined;
