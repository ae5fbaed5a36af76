/**
 * Who reads what: per repository, application name (`Application-Name`, or `-` when a reader
 * sends none) and context, the commit last served, when, and how many reads. Kept in memory,
 * bounded: at most MAX_READ_RECORD_ENTRIES entries in all, the least recently read dropped first,
 * so a fleet of any size (or a caller inventing contexts) costs a fixed amount of memory. Each
 * process of `serve --workers N` keeps its own record (of the reads it served).
 */
import { LRUCache } from 'lru-cache';

/** Entries kept at most, across every repository: about 300 bytes each. */
export const MAX_READ_RECORD_ENTRIES = 10_000;
/** The application name of a reader that sent none. */
export const NO_APPLICATION = '-';

export interface ReadRecordEntry {
  readonly application: string;
  readonly context: string;
  readonly commit: string;
  /** ISO 8601 instant of the last read. */
  readonly lastRead: string;
  readonly reads: number;
}

export interface ServedRead {
  readonly repository: string;
  readonly application?: string;
  readonly context: string;
  readonly commit: string;
}

export class ReadRecord {
  private readonly entries: LRUCache<string, ReadRecordEntry & { readonly repository: string }>;

  constructor(readonly maxEntries = MAX_READ_RECORD_ENTRIES) {
    this.entries = new LRUCache({ max: maxEntries });
  }

  record(read: ServedRead, at = new Date()): void {
    const application = read.application ?? NO_APPLICATION;
    const id = `${read.repository}\0${application}\0${read.context.toLowerCase()}`;
    const known = this.entries.get(id);
    this.entries.set(id, {
      repository: read.repository,
      application,
      context: read.context,
      commit: read.commit,
      lastRead: at.toISOString(),
      reads: (known?.reads ?? 0) + 1,
    });
  }

  /** A repository's entries, by application name then context. */
  of(repository: string): ReadRecordEntry[] {
    const out: ReadRecordEntry[] = [];
    for (const { repository: name, ...entry } of this.entries.values()) if (name === repository) out.push(entry);
    return out.sort((a, b) =>
      a.application === b.application ? (a.context < b.context ? -1 : 1) : a.application < b.application ? -1 : 1,
    );
  }

  get size(): number {
    return this.entries.size;
  }
}
