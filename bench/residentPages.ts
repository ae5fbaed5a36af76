/**
 * The resident memory of a group of processes (`serve --workers N`: the primary and its workers),
 * each resident page counted once. Summing the processes' RSS counts a page every process maps
 * once per process: the node binary's code, about 43 MiB resident in each of three processes,
 * counted three times. The physical frame of every resident page is read from
 * `/proc/<pid>/pagemap` (Linux; frame numbers need root, CAP_SYS_ADMIN): distinct frames are
 * the memory the group holds. Without frame numbers, every page counts once per process, as the
 * sum of RSS does, and `framesKnown` says so.
 */
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';

const PAGE = 4096;
const PRESENT = 1n << 63n;
const FRAME = (1n << 55n) - 1n;

export interface ResidentPages {
  /** Distinct resident pages of all the processes, in KiB. */
  readonly uniqueKiB: number;
  /** Resident pages of each process summed (what summing RSS gives), in KiB. */
  readonly summedKiB: number;
  /** Whether frame numbers could be read; if not, uniqueKiB is summedKiB. */
  readonly framesKnown: boolean;
}

/** The mappings of a process that have resident pages: [first page, page count]. */
function residentMappings(pid: number): [number, number][] {
  const mappings: [number, number][] = [];
  let range: [number, number] | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const address = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
    if (address) {
      const start = Number(BigInt(`0x${address[1]}`) / BigInt(PAGE));
      range = [start, Number(BigInt(`0x${address[2]}`) / BigInt(PAGE)) - start];
    } else if (range && /^Rss:\s+[1-9]/.test(line)) {
      mappings.push(range);
    }
  }
  return mappings;
}

export function residentPagesOf(pids: readonly number[]): ResidentPages {
  const frames = new Set<bigint>();
  let summed = 0;
  let unknown = 0;
  for (const pid of pids) {
    const pagemap = openSync(`/proc/${pid}/pagemap`, 'r');
    try {
      for (const [first, count] of residentMappings(pid)) {
        const entries = Buffer.alloc(count * 8);
        readSync(pagemap, entries, 0, entries.length, first * 8);
        for (let i = 0; i < count; i++) {
          const entry = entries.readBigUInt64LE(i * 8);
          if (!(entry & PRESENT)) continue;
          summed++;
          const frame = entry & FRAME;
          if (frame === 0n)
            unknown++; // no CAP_SYS_ADMIN: frames read as 0
          else frames.add(frame);
        }
      }
    } finally {
      closeSync(pagemap);
    }
  }
  const kiB = (pages: number) => (pages * PAGE) / 1024;
  return { uniqueKiB: kiB(frames.size + unknown), summedKiB: kiB(summed), framesKnown: unknown === 0 };
}
