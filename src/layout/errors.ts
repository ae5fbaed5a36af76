/** Errors of the configuration layout in git (see src/domain/errors.ts for the taxonomy). */
import { CfghubError, ErrorCode } from '../domain/errors.js';

/**
 * Content that breaks the layout: a document that is not valid YAML or has an unknown field, a key
 * file in the wrong shard, a file in a place the layout has none. Names the file and the commit
 * when known, so a commit made with plain git can be found and mended.
 */
export class LayoutError extends CfghubError {
  readonly code = ErrorCode.Layout;
  constructor(
    message: string,
    readonly file?: string,
    public commit?: string,
  ) {
    super(message);
  }

  /** The same problem, its message prefixed by what it stopped. */
  within(what: string): LayoutError {
    return new LayoutError(`${what}: ${this.message}`, this.file, this.commit);
  }
}
