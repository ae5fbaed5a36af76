/**
 * The push journal: one `fdatasync` makes a push durable, where its own files took two
 * rounds of fsyncs (the pack, its index and the ref's lock; then, after the renames, the two
 * folders). etcd's write-ahead log does the same.
 *
 * A server process appends, under the ref's lock and once the compare-and-swap holds, one record
 * per commit: the repository, the ref's move (old and new commit, and the ref file's identity
 * before and after, see refStamp in refs.ts) and the bytes of the commit's pack and index
 * (journalRecords.ts). It fdatasyncs the journal, and only then renames the lock over the ref, so
 * no reader ever sees a commit that is not durable; the pack, its index and the ref are written as
 * before but not fsynced. Appends that arrive while an fdatasync runs, for any repository, share
 * the next one (group commit across repositories). A journal file is followed by a new one at
 * ROTATE_BYTES; the files its records name are then fsynced (the checkpoint) and it is deleted.
 * A clean stop does the same to the last one.
 *
 * After a power cut the pack files and the ref move may be lost while the journal is not: at the
 * next start (and when a worker dies) journalReplay.ts writes back each pack that is missing and
 * moves each ref whose file is still exactly as the journal saw it before its move. Each process
 * has a journal of its own (`.cfghub/journal/<pid>-<random>.journal` in the repositories folder),
 * its header naming its holder as a ref lock's note does (lockHolder.ts), so a replay never takes
 * the journal of a live process.
 *
 * Where the journal cannot be made (the repositories folder is read-only, or full) pushes make
 * their own files durable as before (in rounds of fsyncs, see GitRepository.commit), and the
 * journal is tried again RETRY_MS later.
 */
import * as fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { encodeHeader, encodeRecord, HEADER_BYTES, voidRecordBytes, type JournalEntry } from './journalRecords.js';
import { closeQuietly, fsyncFolder, fsyncIfThere } from '../durableFs.js';
import { holderNote } from '../refs/lockHolder.js';
import { secondsSince, telemetry } from '../../lib/telemetry.js';

const fdatasyncAsync = promisify(fs.fdatasync);
const fsyncAsync = promisify(fs.fsync);

/** The journals' folder, inside the repositories folder (the listing skips names starting with a dot). */
export const JOURNAL_FOLDER = join('.cfghub', 'journal');
export const JOURNAL_SUFFIX = '.journal';
/** A journal file being made (JournalFile.create); one left by a crash is removed by the replay. */
export const CREATING_SUFFIX = '.creating';
/** A journal file is followed by a new one once it holds this much. */
const ROTATE_BYTES = 4 * 1024 * 1024;
/**
 * Zeros written ahead when a journal file is made: overwriting blocks the file already has makes an
 * fdatasync flush data alone, while appending also commits the file's size (0.12 against 0.19 ms
 * measured on the benchmark machine). Small, as a full disk must still take the journal's header.
 */
const PREALLOCATE_BYTES = 1024 * 1024;
/**
 * The zeros written ahead, a piece at a time. A buffer of PREALLOCATE_BYTES made for each journal
 * file and freed was a block of 1 MiB that glibc gave from mmap and, once freed, took as its new
 * mmap threshold: every block up to 1 MiB came from the C heap after that, which keeps what it
 * was given (the server's resident memory grew).
 */
const ZEROS = Buffer.alloc(64 * 1024);
/** After a journal could not be made, pushes make their own files durable for this long before it is tried again. */
const RETRY_MS = 5_000;

/** What a push holds once its record is durable: it tells which files its commit wrote, or that it gave up. */
export interface JournalTicket {
  /** The ref moved: these files and folders are fsynced before the journal file is let go. */
  committed(files: readonly string[], folders: readonly string[]): void;
  /** The ref was not moved after all (its rename failed): the record is voided, never replayed. */
  abandon(): void;
}

function writeAllAt(fd: number, bytes: Uint8Array, position: number): void {
  let written = 0;
  while (written < bytes.length)
    written += fs.writeSync(fd, bytes, written, bytes.length - written, position + written);
}

/** One journal file, appended to by this process only. */
export class JournalFile {
  private end = HEADER_BYTES;
  private seq = 0;
  private synced = 0;
  private syncing: Promise<void> | undefined;
  /** Records appended whose push has not yet said committed or abandon. */
  readonly open = new Set<number>();
  /**
   * Pushes that took this file (PushJournal.file) and have not let it go. A push takes the file
   * before it writes its pack and takes its ref's lock, and appends only then; other pushes may
   * fill the file meanwhile and retire it. Closed under such a push, the file's descriptor was
   * written to after its close: an EBADF answered as a 500 under load, or, with the number
   * reused by a file opened meanwhile, the record written into that file.
   */
  private holders = 0;
  private removed = false;
  /** What a checkpoint fsyncs before this file may go. */
  readonly files = new Set<string>();
  readonly folders = new Set<string>();
  /** Called when a push ends (committed or abandoned), while the file is retired: it may go then. */
  onPushDone: (() => void) | undefined;

  private constructor(
    readonly path: string,
    private readonly fd: number,
  ) {}

  /**
   * Makes a new journal file durably (its header, its zeros, its folder entry). It is written under
   * a name of its own and renamed, so a replay (journalReplay.ts) never finds a journal without
   * its holder's note.
   */
  static async create(folder: string): Promise<JournalFile> {
    if (fs.mkdirSync(folder, { recursive: true }) !== undefined) {
      // Made just now (with `.cfghub` perhaps): their entries must survive a power cut too.
      await fsyncFolder(dirname(folder));
      await fsyncFolder(dirname(dirname(folder)));
    }
    const base = join(folder, `${process.pid}-${randomBytes(6).toString('hex')}`);
    const temporary = `${base}${CREATING_SUFFIX}`;
    const path = `${base}${JOURNAL_SUFFIX}`;
    const fd = fs.openSync(temporary, 'wx', 0o600);
    try {
      writeAllAt(fd, encodeHeader(holderNote(fs.fstatSync(fd).ino)), 0);
      for (let at = 0; at < PREALLOCATE_BYTES; at += ZEROS.length) writeAllAt(fd, ZEROS, HEADER_BYTES + at);
      await fsyncAsync(fd);
      fs.renameSync(temporary, path);
      await fsyncFolder(folder);
    } catch (error) {
      closeQuietly(fd);
      fs.rmSync(temporary, { force: true });
      fs.rmSync(path, { force: true });
      throw error;
    }
    return new JournalFile(path, fd);
  }

  get full(): boolean {
    return this.end >= ROTATE_BYTES;
  }

  /** A push takes this file, to append to later; it lets it go when done (letGo), appended or not. */
  hold(): this {
    this.holders++;
    return this;
  }

  letGo(): void {
    this.holders--;
    this.onPushDone?.();
  }

  /** Whether a push still holds this file or has a record in it not yet committed or abandoned: it may not go. */
  get inUse(): boolean {
    return this.holders > 0 || this.open.size > 0;
  }

  /** Writes a record at the end (synchronously: into the page cache); its seq and place. */
  private write(entry: JournalEntry): { seq: number; offset: number } {
    const seq = this.seq + 1;
    const bytes = encodeRecord(seq, entry);
    const offset = this.end;
    writeAllAt(this.fd, bytes, offset);
    this.seq = seq;
    this.end += bytes.length;
    this.open.add(seq);
    return { seq, offset };
  }

  /** Resolves once record `seq` and every one before it are durable: one fdatasync for all written meanwhile. */
  private async durableThrough(seq: number): Promise<void> {
    while (this.synced < seq) {
      if (!this.syncing) {
        const target = this.seq;
        const started = process.hrtime.bigint();
        this.syncing = fdatasyncAsync(this.fd)
          .then(() => {
            telemetry.fsync(secondsSince(started));
            this.synced = Math.max(this.synced, target);
          })
          .finally(() => (this.syncing = undefined));
      }
      await this.syncing;
    }
  }

  /**
   * Appends a commit's record and waits until it is durable; the ticket says afterwards which
   * files the commit wrote. Throws if the record could not be written or made durable: the push
   * then fails, its ref not moved, and the record is voided.
   */
  async append(entry: JournalEntry): Promise<JournalTicket> {
    const { seq, offset } = this.write(entry);
    try {
      await this.durableThrough(seq);
    } catch (error) {
      this.void(seq, offset);
      throw error;
    }
    return {
      committed: (files, folders) => {
        for (const path of files) this.files.add(path);
        for (const path of folders) this.folders.add(path);
        this.open.delete(seq);
        this.onPushDone?.();
      },
      abandon: () => {
        this.void(seq, offset);
        this.onPushDone?.();
      },
    };
  }

  /** Voids the record at `offset` (its push failed): never replayed, though it may be durable already. */
  private void(seq: number, offset: number): void {
    this.open.delete(seq);
    try {
      writeAllAt(this.fd, voidRecordBytes(), offset);
    } catch {
      // the disk is failing already; the push's own error is the one reported
    }
  }

  /** fsyncs what the records named, so far; true once none is open and this file may go. */
  async checkpoint(): Promise<boolean> {
    const files = [...this.files];
    const folders = [...this.folders];
    this.files.clear();
    this.folders.clear();
    try {
      // Files first, then their folders: a folder's entry must not name a file whose bytes may be lost.
      await Promise.all(files.map(fsyncIfThere));
      await Promise.all(folders.map(fsyncIfThere));
    } catch (error) {
      for (const file of files) this.files.add(file);
      for (const folder of folders) this.folders.add(folder);
      throw error;
    }
    return !this.inUse && this.files.size === 0 && this.folders.size === 0;
  }

  /** Closes and deletes the file: every record's files are durable (checkpoint returned true). */
  remove(): void {
    if (this.removed) return; // its descriptor's number may be another file's by now
    this.removed = true;
    closeQuietly(this.fd);
    fs.rmSync(this.path, { force: true });
  }
}

export class PushJournal {
  private current: JournalFile | undefined;
  private opening: Promise<JournalFile> | undefined;
  private readonly retired: JournalFile[] = [];
  private failedAt = -Infinity;
  private retiring: Promise<void> = Promise.resolve();

  constructor(private readonly root: string) {}

  private get folder(): string {
    return join(this.root, JOURNAL_FOLDER);
  }

  /**
   * The journal file to append to, held for the caller until it calls `letGo()`; undefined while
   * the journal cannot be made (the push then makes its own files durable). Made at the first
   * push, not at start: a server that takes no pushes writes nothing.
   */
  async file(): Promise<JournalFile | undefined> {
    if (this.current && !this.current.full) return this.current.hold();
    if (this.current) this.retire(this.current);
    this.current = undefined;
    if (performance.now() - this.failedAt < RETRY_MS) return undefined;
    this.opening ??= JournalFile.create(this.folder).finally(() => (this.opening = undefined));
    try {
      this.current = await this.opening;
      return this.current.hold();
    } catch {
      this.failedAt = performance.now();
      return undefined;
    }
  }

  private retire(file: JournalFile): void {
    this.retired.push(file);
    file.onPushDone = () => this.retireLater();
    this.retireLater();
  }

  /** Checkpoints the retired files whose pushes are all done, and deletes them; one at a time. */
  private retireLater(): void {
    this.retiring = this.retiring.then(async () => {
      for (const file of [...this.retired]) {
        if (file.inUse) continue; // its last push will call again
        try {
          if (!(await file.checkpoint())) continue;
          file.remove();
          this.retired.splice(this.retired.indexOf(file), 1);
        } catch {
          // An fsync failed (a failing disk): the file stays, tried again at the next rotation or
          // stop, and is replayed at the next start if it is still there then.
        }
      }
    });
  }

  /** Waits for the retired files' checkpoints (tests, a clean stop). */
  settled(): Promise<void> {
    return this.retiring;
  }

  /**
   * At a clean stop, after the last push was answered: every file the journal's records name is
   * fsynced and the journal deleted. A journal that cannot be let go stays, for the next start.
   */
  async close(): Promise<void> {
    if (this.current) this.retire(this.current);
    this.current = undefined;
    await this.opening?.then((file) => this.retire(file)).catch(() => undefined);
    await this.retiring;
  }
}
