/**
 * Limits on rendering file templates: a template of a few KB that embeds a file ten
 * times per level could otherwise make one pull hundreds of MB, and a chain of embeds thousands
 * of levels deep. Checked while rendering (never building a string beyond them), and the embed
 * depth also at push time, where it can be known from the files and FileEmbed values alone.
 */
import { ErrorCode, RenderLimitError } from './errors.js';

/** Levels of FileEmbed below a file (a file embedding one that embeds nothing: 1). */
export const MAX_EMBED_DEPTH = 16;
/** Characters (UTF-16 code units) one rendered file may have, embedded files included. */
export const MAX_RENDERED_FILE_CHARS = 4 * 1024 * 1024;
/** Characters all rendered files of one answer (a pull) may have together. */
export const MAX_RENDERED_ANSWER_CHARS = 8 * 1024 * 1024;

export function fileTooLarge(path: string): RenderLimitError {
  return new RenderLimitError(
    ErrorCode.RenderTooLarge,
    path,
    `file ${path} renders to more than ${MAX_RENDERED_FILE_CHARS} characters, the limit of a rendered file`,
  );
}

export function answerTooLarge(path: string): RenderLimitError {
  return new RenderLimitError(
    ErrorCode.RenderTooLarge,
    path,
    `the files of this answer render to more than ${MAX_RENDERED_ANSWER_CHARS} characters together (the limit was passed at file ${path}); ask for fewer files (rawFile, or No-Files)`,
  );
}

export function embedTooDeep(path: string, chain: readonly string[]): RenderLimitError {
  const shownChain = chain.length > 6 ? [...chain.slice(0, 3), '…', ...chain.slice(-2)] : chain;
  return new RenderLimitError(
    ErrorCode.EmbedTooDeep,
    path,
    `file ${path} embeds files more than ${MAX_EMBED_DEPTH} levels deep (${shownChain.join(' -> ')})`,
  );
}
