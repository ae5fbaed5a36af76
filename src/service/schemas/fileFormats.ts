/**
 * A rendered file read as data in the format its file schema names, each by a well-kept parser:
 * JSON (JSON.parse), YAML (yaml, core schema, unique keys), properties (properties: numbers and
 * true/false are converted as it does), dotenv (dotenv: every value a string) and TOML
 * (smol-toml; dates become their text). The data is what the schema, if any, is checked on.
 */
import { createRequire } from 'node:module';
import YAML from 'yaml';
import type { FileFormat } from '../../domain/schemas.js';

/** The parsers are loaded at their first use (see schemaCompiler.ts: the CLI need not pay for them). */
const require = createRequire(import.meta.url);
const parseDotenv = (text: string) => (require('dotenv') as typeof import('dotenv')).parse(text);
const parseProperties = (text: string) =>
  (require('properties') as typeof import('properties').default).parse(text, {});
const parseToml = (text: string) => (require('smol-toml') as typeof import('smol-toml')).parse(text);

export type ParsedFile =
  { readonly ok: true; readonly data: unknown } | { readonly ok: false; readonly problem: string };

const firstLine = (error: unknown) => String((error as Error)?.message ?? error).split('\n')[0];

export function parseRendered(format: FileFormat, content: string): ParsedFile {
  try {
    switch (format) {
      case 'json':
        return { ok: true, data: JSON.parse(content) };
      case 'yaml':
        return {
          ok: true,
          data: YAML.parse(content, { schema: 'core', uniqueKeys: true, prettyErrors: false }) ?? null,
        };
      case 'properties':
        return { ok: true, data: parseProperties(content) };
      case 'env':
        return { ok: true, data: { ...parseDotenv(content) } };
      case 'toml':
        // Through JSON: TOML dates (TomlDate objects) become their text, as a schema expects.
        return { ok: true, data: JSON.parse(JSON.stringify(parseToml(content))) };
    }
  } catch (error) {
    return {
      ok: false,
      problem: `is not valid ${format === 'env' ? 'dotenv' : format.toUpperCase()}: ${firstLine(error)}`,
    };
  }
}
