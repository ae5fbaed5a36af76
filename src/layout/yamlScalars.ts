/**
 * The key documents' YAML scalars, written and read by hand: the documents have one fixed shape,
 * and the yaml library's general stringify costs about half a millisecond per document, a tenth of
 * a push. Reading takes the same shortcut only for scalars in exactly the form written here
 * (`readYamlString`); anything else (a document written by hand, any other YAML) goes to the yaml
 * library, so any YAML is still accepted.
 *
 * A string is written plain when it cannot be read as anything else (it starts with a letter, holds
 * only characters that are never YAML syntax, and is no YAML 1.1 or 1.2 keyword); otherwise as a
 * double-quoted scalar, whose escapes JSON's are a subset of.
 */

const PLAIN = /^[A-Za-z][\w./;*()+\-[\],]*(?: [\w./;*()+\-[\],]+)*$/;
const KEYWORDS = new Set(['true', 'false', 'null', 'yes', 'no', 'on', 'off', 'y', 'n']);
/** Characters YAML does not allow unescaped even inside double quotes. */
const NON_PRINTABLE = /[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/g;

export function yamlString(text: string): string {
  if (PLAIN.test(text) && !KEYWORDS.has(text.toLowerCase())) return text;
  return quoted(text);
}

/** Characters that end a plain scalar inside a flow collection (`[a, b]`), though not in block context. */
const FLOW_INDICATORS = /[[\]{},]/;

/**
 * A string as an item of a flow sequence (`references: [a, b]`): plain only when it holds no flow
 * indicator, since a key named `x]` or `a,b` would otherwise end the item or the sequence.
 */
export function yamlFlowString(text: string): string {
  return FLOW_INDICATORS.test(text) ? quoted(text) : yamlString(text);
}

function quoted(text: string): string {
  return JSON.stringify(text).replace(
    NON_PRINTABLE,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

export function yamlNullableString(text: string | null): string {
  return text === null ? 'null' : yamlString(text);
}

const CONTROL_OR_NON_PRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/;

/**
 * The string a scalar written by yamlString stands for, or undefined when the text is not in that
 * form (then the caller reads the document with the yaml library, which knows all of YAML).
 */
export function readYamlString(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (PLAIN.test(text)) return KEYWORDS.has(text.toLowerCase()) ? undefined : text;
  if (text.length < 2 || text[0] !== '"' || text[text.length - 1] !== '"' || CONTROL_OR_NON_PRINTABLE.test(text))
    return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The text after `name: ` of a line of a document written in one fixed shape (key documents, settings); undefined for another line. */
export function lineField(line: string | undefined, name: string): string | undefined {
  return line?.startsWith(`${name}: `) ? line.slice(name.length + 2) : undefined;
}
