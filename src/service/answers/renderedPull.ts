/** A pull in one of its plain-text renderings: the properties only, no files. */
import type { Context } from '../../domain/context.js';
import { MEDIA_TYPES, RENDERERS, type PullFormat, type RenderedProperty } from '../../domain/renderings.js';
import { pullBody, type ReadTarget } from '../read/read.js';
import { answerOf, type Answer } from './readCache.js';

export function renderedPull(target: ReadTarget, context: Context, format: Exclude<PullFormat, 'json'>): Answer {
  const body = pullBody(target, '', context, {
    includeComments: false,
    includeValueContext: false,
    noProperties: false,
    noFiles: true,
  });
  const properties: RenderedProperty[] = Object.entries(
    body.properties as Record<string, { val: unknown; encryption?: boolean }>,
  ).map(([name, p]) => ({
    name,
    value: p.encryption ? undefined : p.val,
  }));
  return answerOf(RENDERERS[format](properties), MEDIA_TYPES[format]);
}
