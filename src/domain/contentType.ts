/** The content type of a file by its extension (case-insensitive); text/plain when unknown. */

const TYPES: Record<string, string> = {
  json: 'application/json',
  xml: 'application/xml',
  yaml: 'application/x-yaml',
  yml: 'application/x-yaml',
  properties: 'text/x-java-properties',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  js: 'application/javascript',
  csv: 'text/csv',
  md: 'text/markdown',
  sh: 'application/x-sh',
  toml: 'application/toml',
  ini: 'text/plain',
  conf: 'text/plain',
  txt: 'text/plain',
};

export function contentTypeOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return 'text/plain';
  return TYPES[name.slice(dot + 1).toLowerCase()] ?? 'text/plain';
}
