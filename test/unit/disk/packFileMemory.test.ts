/**
 * A pack kept open in memory holds memory of its own (ownCopies.ts): a small push's pack and
 * index are views into Node's shared 8 KiB pool, and kept as they are, each open pack kept a
 * whole slab until the packs were merged. Both ways a pack comes to be open: written by this
 * process (`fromBuffers`) and read from disk (`open`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PackFile } from '../../../src/disk/objects/packFile.js';
import { encodeObject } from '../../../src/git/gitObjects.js';
import { buildPack } from '../../../src/git/packWriter.js';

/** What an open pack holds: its index's bytes and the bytes its entries are read from (white box: private fields). */
function held(pack: PackFile): { index: Buffer; bytes: Buffer } {
  const inside = pack as unknown as { index: { index: Buffer }; bytes: { from(start: number, end: number): Buffer } };
  return { index: inside.index.index, bytes: inside.bytes.from(0, 1) };
}

const ownMemory = (bytes: Buffer) => bytes.buffer.byteLength <= bytes.byteOffset + bytes.length + 20; // a view of the whole pack less its checksum

let dir: string | undefined;
afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

describe('a small pack kept open', () => {
  const blob = encodeObject('blob', Buffer.from('key: a.b\nvalue: 1\n'));
  const built = buildPack([blob]);

  it('is built from views into the shared pool (what makes the copy needed)', () => {
    expect(built.pack.buffer.byteLength).toBeGreaterThan(built.pack.length);
  });

  it('holds bytes of its own, written by this process', () => {
    const pack = PackFile.fromBuffers(built.name, built.pack, built.index);
    const { index, bytes } = held(pack);
    expect(index.buffer.byteLength).toBe(index.length);
    expect(ownMemory(bytes)).toBe(true);
    expect(pack.has(Buffer.from(blob.oid, 'hex'))).toBe(true);
  });

  it('holds bytes of its own, read from disk', () => {
    dir = mkdtempSync(join(tmpdir(), 'cfghub-pack-'));
    writeFileSync(join(dir, `${built.name}.pack`), built.pack);
    writeFileSync(join(dir, `${built.name}.idx`), built.index);
    const pack = PackFile.open(join(dir, built.name), built.name);
    const { index, bytes } = held(pack);
    expect(index.buffer.byteLength).toBe(index.length);
    expect(ownMemory(bytes)).toBe(true);
    expect(pack.has(Buffer.from(blob.oid, 'hex'))).toBe(true);
    pack.close();
  });
});
