/**
 * Whether the server's disk was found full: set when a write fails with ENOSPC or EDQUOT, cleared
 * when a later write succeeds. For readiness checks (`/readyz`) and operators; cheap to ask.
 */
let fullSince: number | undefined;
let fullRepository: string | undefined;

/** Records the outcome of a write: `full` when it failed for lack of space. */
export function noteWrite(full: boolean, repository?: string): void {
  if (full) {
    fullSince ??= Date.now();
    fullRepository = repository;
  } else {
    fullSince = undefined;
    fullRepository = undefined;
  }
}

/** Undefined while no write has found the disk full since the last successful one. */
export function diskFull(): { readonly since: number; readonly repository?: string } | undefined {
  return fullSince === undefined ? undefined : { since: fullSince, repository: fullRepository };
}
