/**
 * Who holds a ref lock, so a lock of a live cfghub process is never taken away however old it
 * looks (a writer stalled for half a minute by a slow disk or a SIGSTOP is alive, and breaking its
 * lock would let two writers move the ref). Beside `<dir>/<ref>.lock` each cfghub writer keeps
 * `<dir>/.<ref>.holder.lock` (git skips names starting with a dot or ending in `.lock` in ref
 * folders) holding the lock file's inode, its process id, the process's start time and the
 * machine's boot id and host name. The note describes the lock only if the inodes match; the
 * holder is alive if it is on this machine, booted the same, and a process with that id and start
 * time still runs. A lock whose holder is unknown (git's own, another machine's) is judged by its
 * age alone.
 */
import * as fs from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';

function readText(path: string): string | undefined {
  try {
    return fs.readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

const BOOT_ID = readText('/proc/sys/kernel/random/boot_id')?.trim() ?? 'unknown';
const HOST = hostname();

/** A process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), or undefined. */
function startTime(pid: number): string | undefined {
  const stat = readText(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  // The command name (field 2) is in parentheses and may hold spaces: count from its end.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

const OWN_START = startTime(process.pid) ?? 'unknown';

/** The note's path for a lock file. */
export function holderPath(lockPath: string): string {
  return join(dirname(lockPath), `.${basename(lockPath, '.lock')}.holder.lock`);
}

/** The note for a lock this process has just created (`ino`: the lock file's inode). */
export function holderNote(ino: number | bigint): string {
  return `cfghub ${ino} ${process.pid} ${OWN_START} ${BOOT_ID} ${HOST}\n`;
}

/** True if the note beside `lockPath` describes that very lock file and its holder is alive. */
export function holderAlive(lockPath: string, lockIno: number | bigint): boolean {
  return noteHolderAlive(readText(holderPath(lockPath)), lockIno);
}

/**
 * True if `text` (a note written by holderNote) describes the file of inode `fileIno` and its holder
 * is alive; also for notes kept inside a file of their own (a push journal's header, pushJournal.ts).
 */
export function noteHolderAlive(text: string | undefined, fileIno: number | bigint): boolean {
  const note = text?.trim().split(' ');
  if (!note || note.length < 6 || note[0] !== 'cfghub') return false;
  const [, ino, pid, start, boot, ...host] = note;
  if (ino !== String(fileIno) || boot !== BOOT_ID || host.join(' ') !== HOST || BOOT_ID === 'unknown') return false;
  const id = Number(pid);
  if (!Number.isInteger(id) || id <= 0) return false;
  if (id === process.pid) return start === OWN_START;
  const running = startTime(id);
  return running !== undefined && running === start;
}

/**
 * True if the note beside `lockPath` describes that very lock file and says its holder, a cfghub
 * process of this machine, is gone (the machine booted since, or no such process runs): nobody
 * will ever rename that lock. A lock with no note, or a note of another machine, is not known dead.
 */
export function holderKnownDead(lockPath: string, lockIno: number | bigint): boolean {
  const text = readText(holderPath(lockPath));
  const note = text?.trim().split(' ');
  if (!note || note.length < 6 || note[0] !== 'cfghub') return false;
  const [, ino, , , boot, ...host] = note;
  if (ino !== String(lockIno) || host.join(' ') !== HOST || BOOT_ID === 'unknown') return false;
  return boot !== BOOT_ID || !noteHolderAlive(text, lockIno);
}
