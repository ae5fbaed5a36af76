/**
 * SHA-1 in hex, in one call. Node's one-shot `crypto.hash` (20.12 and later) costs about half of
 * createHash, update and digest on a short input (a key's name, a key document, a shard's tree),
 * and a push hashes hundreds of those; older Nodes get the stream.
 */
import crypto from 'node:crypto';

export const sha1Hex: (data: string | Buffer) => string =
  typeof crypto.hash === 'function'
    ? (data) => crypto.hash('sha1', data, 'hex')
    : (data) => crypto.createHash('sha1').update(data).digest('hex');
