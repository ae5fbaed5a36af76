/**
 * `Files-Glob` patterns (ConfigHub): `*` any characters including `/`, `?` one character,
 * `{a,b}` either alternative; the pattern matches the whole path.
 */

function escape(text: string): string {
  return text.replace(/[.+^$()|[\]\\]/g, '\\$&');
}

export function globToRegExp(pattern: string): RegExp {
  let source = '';
  let depth = 0;
  for (const char of pattern) {
    if (char === '*') source += '.*';
    else if (char === '?') source += '.';
    else if (char === '{') {
      source += '(?:';
      depth++;
    } else if (char === '}' && depth > 0) {
      source += ')';
      depth--;
    } else if (char === ',' && depth > 0) source += '|';
    else source += escape(char);
  }
  source += ')'.repeat(depth);
  return new RegExp(`^${source}$`, 's');
}
