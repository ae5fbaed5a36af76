/**
 * Which repositories folder a replication state comes from, and from which generation of
 * primaries: kept in `<repos>/.cfghub/identity.json` as `{"folder": <uuid>, "generation": n}`.
 *
 * - The folder's identity is made the first time a server serves the folder, and never changes:
 *   a primary started on another folder (an unmounted volume, a mistyped `--repos`) names another
 *   identity, and its replicas refuse to follow it (replicator.ts).
 * - The generation counts promotions: `cfghub promote` on a replica's folder makes it one more
 *   than the generation the replica followed. A primary's state carries it; a replica refuses a
 *   lower one, so an old primary restarted after a promotion cannot pull its replicas back.
 *
 * A replica also keeps, in `<repos>/.cfghub/replica.json`, the identity and generation of the
 * primary it follows (the pin), and takes the primary's generation as its folder's own: a replica
 * promoted later starts one above it.
 */
import * as fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';
import { fsyncFolder, removeIfPresent, writeFileAtomic } from '../durableFs.js';

export const folderIdentitySchema = z.strictObject({
  folder: z.string().uuid(),
  generation: z.number().int().min(1),
});

export type FolderIdentity = z.infer<typeof folderIdentitySchema>;

const IDENTITY_FILE = 'identity.json';
const PIN_FILE = 'replica.json';
const pinSchema = z.strictObject({ following: folderIdentitySchema });

const records = (root: string) => join(root, '.cfghub');

function readJson<T>(path: string, schema: z.ZodType<T>, what: string): T | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const parsed = schema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`${what} in .cfghub is damaged: ${parsed.error.issues[0]?.message ?? ''}`);
  return parsed.data;
}

async function writeJson(root: string, file: string, value: unknown): Promise<void> {
  await fs.promises.mkdir(records(root), { recursive: true, mode: 0o700 });
  await writeFileAtomic(join(records(root), file), `${JSON.stringify(value, null, 2)}\n`, 0o644);
  await fsyncFolder(records(root));
}

/** The folder's identity as on disk; undefined before the folder was first served. */
export function readIdentity(root: string): FolderIdentity | undefined {
  return readJson(join(records(root), IDENTITY_FILE), folderIdentitySchema, 'the folder identity');
}

/** The folder's identity, made (generation 1) if the folder has none yet. */
export async function ensureIdentity(root: string): Promise<FolderIdentity> {
  const found = readIdentity(root);
  if (found) return found;
  const made: FolderIdentity = { folder: randomUUID(), generation: 1 };
  await writeJson(root, IDENTITY_FILE, made);
  return made;
}

/** Sets the folder's generation (its identity kept). */
export async function setGeneration(root: string, generation: number): Promise<FolderIdentity> {
  const identity = { ...(await ensureIdentity(root)), generation };
  await writeJson(root, IDENTITY_FILE, identity);
  return identity;
}

/** The primary a replica's folder follows (its pin); undefined when it follows none yet. */
export function readPin(root: string): FolderIdentity | undefined {
  return readJson(join(records(root), PIN_FILE), pinSchema, 'the replica pin')?.following;
}

/** Pins the primary a replica follows, and takes its generation as the folder's own. */
export async function pin(root: string, following: FolderIdentity): Promise<void> {
  await writeJson(root, PIN_FILE, { following });
  const own = await ensureIdentity(root);
  if (own.generation !== following.generation) await setGeneration(root, following.generation);
}

/**
 * Makes a replica's folder a primary's (`cfghub promote`): its generation one above every
 * generation it has seen, its pin removed. Returns the new identity.
 */
export async function promote(root: string): Promise<FolderIdentity> {
  const own = await ensureIdentity(root);
  const following = readPin(root);
  const promoted = await setGeneration(root, Math.max(own.generation, following?.generation ?? 0) + 1);
  await removeIfPresent(join(records(root), PIN_FILE));
  await fsyncFolder(records(root));
  return promoted;
}
