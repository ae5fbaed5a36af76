/**
 * A server process on a faked wall clock: Debian's libfaketime preloaded into it, its monotonic
 * clock left alone.
 *
 * Not through the `faketime` command: that wrapper makes a POSIX semaphore and a shared-memory
 * segment named after its own process id and removes them when it exits normally. A server the
 * tests kill leaves them behind, and a later wrapper that gets the same process id refuses to
 * start (`sem_open: File exists`). Preloading the library makes neither.
 */
import { existsSync } from 'node:fs';

/** Where Debian's `faketime` package puts the library, by architecture. */
const LIBRARY_PLACES = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
];

/** The library's place, or undefined when the `faketime` package is not installed. */
export const FAKETIME_LIBRARY = LIBRARY_PLACES.find((place) => existsSync(place));

/**
 * The environment that runs a process on the faked clock: `clock` is libfaketime's own variables,
 * e.g. `{ FAKETIME: '+1d' }` (a day ahead) or `{ FAKETIME_TIMESTAMP_FILE: file, FAKETIME_NO_CACHE: '1' }`.
 */
export function fakeTimeEnv(clock: Record<string, string>): Record<string, string> {
  if (!FAKETIME_LIBRARY) throw new Error('libfaketime is not installed (apt-get install faketime)');
  return { LD_PRELOAD: FAKETIME_LIBRARY, FAKETIME_DONT_FAKE_MONOTONIC: '1', ...clock };
}
