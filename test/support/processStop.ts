/**
 * SIGSTOP that has taken effect. `kill` returns once the signal is sent, before every thread of a
 * multi-threaded process (etcd, a Node server) has stopped: a thread running on another core went
 * on for milliseconds, long enough for a paused etcd leader to commit a write a test sent right
 * after. So a test that pauses a process waits until /proc shows each of its threads stopped.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { until } from './poll.js';

/** Whether every thread of `pid` is stopped (state T or t in /proc), or the process is gone. */
export function everyThreadStopped(pid: number): boolean {
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return true; // gone: nothing of it runs
  }
  return threads.every((thread) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${thread}/stat`, 'utf8');
      const state = stat[stat.lastIndexOf(')') + 2]; // the field after the name, which may hold spaces
      return state === 'T' || state === 't';
    } catch {
      return true; // the thread ended
    }
  });
}

/** Sends SIGSTOP with `send` and resolves once every thread of `pid` has stopped. */
export async function stopProcess(pid: number, send: () => void): Promise<void> {
  send();
  await until(() => everyThreadStopped(pid), `process ${pid} stopped`, 10_000);
}
