/**
 * `cfghub schemas show|set` (docs/schemas.md), in the style of the other commands: JSON on stdout,
 * one-line errors, exit 0 / 2 (usage, invalid argument, a schema that cannot be used) / 1 (a
 * schema existing content breaks, anything else). On a folder or, with --server, on a server.
 */
import type { Command } from 'commander';
import YAML from 'yaml';
import type { SchemaDocument } from '../../domain/schemas.js';
import { schemaDocumentShape } from '../../domain/schemaDocumentShape.js';
import { ServiceError } from '../../service/errors.js';
import { inputText } from '../input.js';
import { administrationOf, printJson, withTarget } from '../remote/adminTarget.js';

/** A schemas document from a file (`-`: standard input), YAML or JSON. */
function readDocument(path: string): SchemaDocument {
  let doc: unknown;
  try {
    doc = YAML.parse(inputText(path), { schema: 'core', uniqueKeys: true });
  } catch (error) {
    throw new ServiceError(
      'invalid_argument',
      `the schemas document is not valid YAML or JSON: ${(error as Error).message.split('\n')[0]}`,
    );
  }
  const parsed = schemaDocumentShape.safeParse(doc ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ServiceError(
      'invalid_argument',
      `the schemas document is malformed: ${issue.path.join('.') || 'document'}: ${issue.message}`,
    );
  }
  return parsed.data;
}

export function addSchemaCommands(program: Command): void {
  const schemas = program
    .command('schemas')
    .description("a repository's schemas: key schemas, file schemas, context rules (docs/schemas.md)");
  withTarget(schemas.command('show').description('the schemas document, as JSON').argument('<account/name>')).action(
    async (fullName: string, options) => {
      printJson(await administrationOf(fullName, options).schemas(fullName));
    },
  );
  withTarget(
    schemas
      .command('set')
      .description(
        'replace the schemas document (YAML or JSON; - reads standard input), in one commit; refused listing what existing content breaks',
      )
      .argument('<account/name>')
      .argument('<file>')
      .option('--comment <text>', "the commit's comment"),
  ).action(async (fullName: string, file: string, options) => {
    const doc = readDocument(file);
    printJson(await administrationOf(fullName, options).setSchemas(fullName, doc, { comment: options.comment }));
  });
}
