/**
 * Fault points of the write path, for the crash tests: `CFGHUB_FAULT=<step>` makes the process
 * kill itself with SIGKILL the first time a push reaches that step, as a power cut or an
 * out-of-memory kill would. The variable is read once, at load; when it is unset, `faultPoint`
 * is an empty function, so the write path pays nothing for it.
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

export type FaultStep = (typeof FAULT_STEPS)[number];

function armedStep(value: string | undefined): FaultStep | undefined {
  if (!value) return undefined;
  if (!(FAULT_STEPS as readonly string[]).includes(value)) {
    throw new Error(`CFGHUB_FAULT must be one of ${FAULT_STEPS.join(', ')}`);
  }
  return value as FaultStep;
}

const armed = armedStep(process.env.CFGHUB_FAULT);

export const faultPoint: (step: FaultStep) => void = armed
  ? (step) => {
      if (step === armed) process.kill(process.pid, 'SIGKILL');
    }
  : () => undefined;
