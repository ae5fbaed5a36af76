/**
 * Changing a repository's settings (`cfghub repo settings`, `PATCH /rest/admin/repositories/…`): one commit that rewrites `repository.yaml`, made like every write (write/commit.ts). The
 * context levels never change (every value is stored under its context), and a switch that would
 * strand content is refused, naming it: value data types off while a key has a type other than
 * Text, security groups off while a group exists.
 */
import type { RepoSettings } from '../../domain/model.js';
import type { GitRepository } from '../../disk/repository.js';
import { SETTINGS_FLAGS } from '../../layout/canonicalSettings.js';
import { commitChange } from '../write/commit.js';
import { ServiceError } from '../errors.js';
import { aliasProblem } from '../../domain/names.js';
import { approvalRulesProblem, describeRule, type ApprovalRule } from '../../domain/approvalRules.js';

/** The settings that may change; each absent one stays as it is. */
export interface SettingsChange {
  readonly description?: string;
  readonly isPrivate?: boolean;
  readonly isPersonal?: boolean;
  readonly accessControlsEnabled?: boolean;
  readonly vdtEnabled?: boolean;
  readonly securityEnabled?: boolean;
  readonly contextGroupsEnabled?: boolean;
  readonly tokenFreePush?: boolean;
  readonly tokenFreePull?: boolean;
  /** The whole list of required-approval rules; [] removes them. */
  readonly requiredApprovals?: readonly ApprovalRule[];
  /** The repository's alias (the Spring application that names it); null removes it. */
  readonly alias?: string | null;
}

/** The description and every flag of the settings. */
export const CHANGEABLE_SETTINGS = [
  'description',
  ...SETTINGS_FLAGS,
] as const satisfies readonly (keyof SettingsChange)[];

const MAX_DESCRIPTION = 1000;

/** An alias that breaks the rule (names.ts aliasProblem): invalid_argument, saying the rule. */
export function checkAlias(alias: string): void {
  const problem = aliasProblem(alias);
  if (problem) throw new ServiceError('invalid_argument', problem);
}

/** Applies the change; `applied` when a commit was made, `unchanged` when the settings already were so. */
export async function changeSettings(
  repository: GitRepository,
  change: SettingsChange,
): Promise<{ commit: string; outcome: 'applied' | 'unchanged' }> {
  if (
    change.description !== undefined &&
    (change.description.length > MAX_DESCRIPTION || change.description.includes('\u0000'))
  ) {
    throw new ServiceError(
      'invalid_argument',
      `the description must be at most ${MAX_DESCRIPTION} characters, without NUL`,
    );
  }
  if (typeof change.alias === 'string') checkAlias(change.alias);
  const result = await commitChange(repository, (base) => {
    const before = base.settings;
    const fields: Record<string, unknown> = { ...before };
    const changed: string[] = [];
    for (const field of CHANGEABLE_SETTINGS) {
      const value = change[field];
      if (value === undefined || value === before[field]) continue;
      fields[field] = value;
      changed.push(field === 'description' ? 'description' : `${field}: ${String(before[field])} -> ${String(value)}`);
    }
    if (change.requiredApprovals !== undefined) {
      const problem = approvalRulesProblem(change.requiredApprovals, before.levels.length);
      if (problem) throw new ServiceError('invalid_argument', problem);
      const rules = change.requiredApprovals.map((rule) => ({ context: rule.context, approvals: rule.approvals }));
      const describe = (list: readonly ApprovalRule[] | undefined) =>
        (list ?? []).map(describeRule).join(', ') || 'none';
      if (describe(rules) !== describe(before.requiredApprovals)) {
        if (rules.length) fields.requiredApprovals = rules;
        else delete fields.requiredApprovals;
        changed.push(`requiredApprovals: ${describe(before.requiredApprovals)} -> ${describe(rules)}`);
      }
    }
    if (change.alias !== undefined && (change.alias ?? undefined) !== before.alias) {
      if (change.alias === null) delete fields.alias;
      else fields.alias = change.alias;
      changed.push(`alias: ${before.alias ?? 'none'} -> ${change.alias ?? 'none'}`);
    }
    const after = fields as unknown as RepoSettings;
    if (before.vdtEnabled && !after.vdtEnabled) {
      for (const key of base.keys()) {
        if (key.vdt !== 'Text')
          throw new ServiceError(
            'conflict',
            `value data types cannot be turned off: key ${key.key} is of type ${key.vdt}`,
          );
      }
    }
    if (before.securityEnabled && !after.securityEnabled && base.securityGroups.length > 0) {
      throw new ServiceError(
        'conflict',
        `security groups cannot be turned off: the repository has security group ${base.securityGroups[0].name}; delete its groups first`,
      );
    }
    const message = `Change the settings of repository ${repository.fullName}\n\n${changed.join('\n')}\n`;
    return { ok: true, changes: { keys: new Map(), files: new Map(), settings: after }, message };
  });
  return { commit: result.commitId, outcome: result.kind };
}
