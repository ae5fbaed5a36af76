/**
 * Writing the key documents' YAML by hand: the documents have one fixed shape, and the yaml
 * library's general stringify costs about half a millisecond per document, a tenth of a push.
 * Reading still goes through the yaml library, so any YAML (also written by hand) is accepted.
 *
 * A string is written plain when it cannot be read as anything else (it starts with a letter, holds
 * only characters that are never YAML syntax, and is no YAML 1.1 or 1.2 keyword); otherwise as a
 * double-quoted scalar, whose escapes JSON's are a subset of.
 */

const PLAIN = /^[A-Za-z][\w.\/;*()+\-[\],]*(?: [\w.\/;*()+\-[\],]+)*$/;
const KEYWORDS = new Set(['true', 'false', 'null', 'yes', 'no', 'on', 'off', 'y', 'n']);
/** Characters YAML does not allow unescaped even inside double quotes. */
const NON_PRINTABLE = /[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/g;

export function yamlString(text: string): string {
  if (PLAIN.test(text) && !KEYWORDS.has(text.toLowerCase())) return text;
  return JSON.stringify(text).replace(NON_PRINTABLE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function yamlNullableString(text: string | null): string {
  return text === null ? 'null' : yamlString(text);
}
