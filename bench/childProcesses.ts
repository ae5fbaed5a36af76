/**
 * Every child process the pull scenarios start (servers, load generators) is tracked by its pid
 * and stopped by that pid: at the end of its scenario, and, as a safety net, when the bench exits
 * (Ctrl-C, a crash), so no server is ever left listening and no load generator left running.
 * Never by name: other people's processes on a shared machine are not ours to stop.
 */
import type { ChildProcess } from 'node:child_process';

const live = new Set<ChildProcess>();

/** Registers a just-started child; it leaves the set when it exits. */
export function track<T extends ChildProcess>(child: T): T {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function signal(child: ChildProcess, name: NodeJS.Signals): void {
  if (child.pid === undefined || hasExited(child)) return;
  try {
    process.kill(child.pid, name);
  } catch {
    // Already gone between the check and the signal.
  }
}

/** Resolves when the child has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (hasExited(child) || child.pid === undefined) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** SIGTERM to the child's pid, SIGKILL if it is still there after `graceMs`; resolves once it has exited. */
export async function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
  const done = exited(child);
  signal(child, 'SIGTERM');
  const timer = setTimeout(() => signal(child, 'SIGKILL'), graceMs);
  await done;
  clearTimeout(timer);
}

/** For process 'exit' (which cannot wait): SIGKILL to every tracked child still running. */
export function killChildren(): void {
  for (const child of live) signal(child, 'SIGKILL');
  live.clear();
}
