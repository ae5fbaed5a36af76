/**
 * A webhook body's signature, as GitHub signs its hooks: HMAC-SHA256 of the exact body bytes
 * under the hook's secret, hex, in `X-Cfghub-Signature-256: sha256=<hex>`. A receiver computes
 * the same over the body it read and compares in constant time.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Cfghub-Signature-256';

export function signatureOf(body: string | Buffer, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Whether `signature` (the header's value) signs `body` under `secret`. */
export function signatureMatches(body: string | Buffer, secret: string, signature: string | undefined): boolean {
  if (signature === undefined) return false;
  const expected = Buffer.from(signatureOf(body, secret));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
