/**
 * The schemas document read and replaced as a commit (the admin API, the CLI, the console), through
 * the one commit path: the new document is compiled first (a schema too large, too deep, with an
 * unsafe pattern or that does not compile is an invalid_argument naming its entry), then
 * committed, where the schema check weighs every value, rendered file and context against it: a
 * document that existing content breaks is a conflict listing what breaks, and nothing is written.
 * Its preview is the same change as a dry run (write/dryRun.ts): the refusal it would meet, or
 * the commit it would make.
 */
import type { SchemaDocument } from '../../domain/schemas.js';
import { runSteps } from '../../lib/steps.js';
import type { GitRepository } from '../../disk/repository.js';
import { SCHEMAS_FILE } from '../../layout/schemaLayout.js';
import { commitMessage, type PushProvenance } from '../../domain/commitMessage.js';
import { commitChange, type CommitPlan } from '../write/commit.js';
import { dryRun, type DryRunResult } from '../write/dryRun.js';
import { KeyRing } from '../security/keyRing.js';
import { ServiceError } from '../errors.js';
import { compiledSchemasSteps, SchemaDocumentProblem } from './schemaCompiler.js';
import type { Writer } from '../write/writeGuard.js';

export async function readSchemas(repository: GitRepository): Promise<SchemaDocument> {
  return (await repository.headSnapshot()).schemas;
}

export interface SchemasChange {
  readonly commit: string;
  readonly outcome: 'applied' | 'unchanged';
}

/** Throws invalid_argument when the document cannot be used with `levels` levels. */
export function checkSchemaDocument(doc: SchemaDocument, levels: number): void {
  try {
    runSteps(compiledSchemasSteps(doc, undefined, levels));
  } catch (error) {
    if (error instanceof SchemaDocumentProblem) throw new ServiceError('invalid_argument', error.message);
    throw error;
  }
}

/** The change of the schemas document as a commit plan: the document checked first, then the change. */
async function schemasPlan(
  repository: GitRepository,
  doc: SchemaDocument,
  provenance: PushProvenance & { comment?: string },
): Promise<() => CommitPlan> {
  if (provenance.comment?.includes('\u0000'))
    throw new ServiceError('invalid_argument', 'the comment contains a NUL character');
  const head = await repository.headSnapshot();
  checkSchemaDocument(doc, head.settings.levels.length);
  const message = commitMessage(provenance.comment || `Change ${SCHEMAS_FILE}`, provenance);
  return () => ({ ok: true, changes: { keys: new Map(), files: new Map(), schemas: doc }, message });
}

export async function setSchemas(
  repository: GitRepository,
  doc: SchemaDocument,
  provenance: PushProvenance & { comment?: string } = {},
  writer?: Writer,
): Promise<SchemasChange> {
  const result = await commitChange(repository, await schemasPlan(repository, doc, provenance), { writer });
  return { commit: result.commitId, outcome: result.kind };
}

/**
 * What setSchemas would do, nothing written: `refused` with the list of what breaks, `unchanged`,
 * or `applied`. Secured values stay sealed (the admin API opens no group).
 */
export async function previewSchemas(
  repository: GitRepository,
  doc: SchemaDocument,
  provenance: PushProvenance & { comment?: string } = {},
): Promise<DryRunResult> {
  return dryRun(repository, await schemasPlan(repository, doc, provenance), undefined, { ring: () => KeyRing.EMPTY });
}
