/**
 * The two documents of access rules and context groups, in the layout's style (see
 * layout.ts): YAML at the root of the tree, written only when not empty, read strictly.
 *
 *   access-rules.yaml     rule sets: name, stopOnFirstMatch, unmatchedEditable, rules in priority order
 *   context-groups.yaml   context groups: level, name, members
 */
import { z } from 'zod';
import { KEY_MATCHES, VALUE_MATCHES, type RuleSet } from '../domain/accessRules.js';
import type { ContextGroup } from '../domain/contextGroups.js';
import { parseYaml, stringify } from './layout.js';

export const ACCESS_RULES_FILE = 'access-rules.yaml';
export const CONTEXT_GROUPS_FILE = 'context-groups.yaml';

const ruleSchema = z.union([
  z.strictObject({ match: z.enum(KEY_MATCHES), key: z.string(), canEdit: z.boolean() }),
  z.strictObject({ match: z.enum(VALUE_MATCHES), context: z.array(z.string()), canEdit: z.boolean() }),
]);

const rulesDocument = z.strictObject({
  ruleSets: z.array(
    z.strictObject({
      name: z.string(),
      stopOnFirstMatch: z.boolean(),
      unmatchedEditable: z.boolean(),
      rules: z.array(ruleSchema),
    }),
  ),
});

const groupsDocument = z.strictObject({
  groups: z.array(z.strictObject({ level: z.string(), name: z.string(), members: z.array(z.string()) })),
});

const byName = <T extends { name: string }>(a: T, b: T) =>
  a.name.toLowerCase() < b.name.toLowerCase() ? -1 : a.name.toLowerCase() > b.name.toLowerCase() ? 1 : 0;

/**
 * The order the file keeps rule sets in (by name). A commit's new snapshot holds them in this
 * order too (stageCommit.ts), so a server that made the commit lists them as a fresh read does.
 */
export function ruleSetsInStoredOrder(sets: readonly RuleSet[]): RuleSet[] {
  return [...sets].sort(byName);
}

/** The order the file keeps context groups in (by level, then name); see ruleSetsInStoredOrder. */
export function contextGroupsInStoredOrder(groups: readonly ContextGroup[]): ContextGroup[] {
  return [...groups].sort((a, b) => (a.level === b.level ? byName(a, b) : a.level < b.level ? -1 : 1));
}

export function serializeRuleSets(sets: readonly RuleSet[]): string {
  return `# Access rule sets: tokens assigned to a set may change only what its rules allow\n# (when accessControlsEnabled); rules in priority order, the first is the highest. See the README.\n${stringify({ ruleSets: ruleSetsInStoredOrder(sets) })}`;
}

export function parseRuleSets(text: string): RuleSet[] {
  return parseYaml(text, rulesDocument, ACCESS_RULES_FILE).ruleSets;
}

export function serializeContextGroups(groups: readonly ContextGroup[]): string {
  const sorted = contextGroupsInStoredOrder(groups);
  return `# Context groups: a value whose context names a group applies to its members\n# (when contextGroupsEnabled). See the README.\n${stringify({ groups: sorted })}`;
}

export function parseContextGroups(text: string): ContextGroup[] {
  return parseYaml(text, groupsDocument, CONTEXT_GROUPS_FILE).groups;
}
