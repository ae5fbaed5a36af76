/**
 * Commands of issue 17: `cfghub rules …` (access rule sets) and `cfghub context-group …`. Each
 * change is one commit. They work on a repositories folder only (`--repos`), not through
 * `--server`; `repo set` is an alias of issue 19's `repo settings` (program.ts).
 */
import type { Command, Option } from 'commander';
import {
  addRule,
  createRuleSet,
  deleteRule,
  deleteRuleSet,
  findRuleSet,
  listRuleSets,
  moveRule,
  parseRule,
  setRuleSetSwitches,
} from '../service/accessRuleSets.js';
import { addGroupMember, createContextGroup, deleteContextGroup, listContextGroups, removeGroupMember } from '../service/contextGroupCommands.js';
import { ServiceError } from '../service/errors.js';
import { parseFullName, requireRepository } from '../service/repositories.js';
import { TokenService } from '../service/tokens.js';
import { RepositoryRegistry } from '../disk/registry.js';
import type { GitRepository } from '../disk/repository.js';
import { TokenStore } from '../disk/tokenStore.js';

function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

function parseBoolean(text: string, what: string): boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new ServiceError('invalid_argument', `${what} is true or false, got ${JSON.stringify(text)}`);
}

function parseNumber(text: string, what: string): number {
  if (!/^\d{1,6}$/.test(text)) throw new ServiceError('invalid_argument', `${what} is a whole number, got ${JSON.stringify(text)}`);
  return Number(text);
}

export function addAccessCommands(program: Command, reposOption: () => Option, reposDir: (option: string | undefined) => string): void {
  const open = (fullName: string, repos: string | undefined) => {
    const { account, name } = parseFullName(fullName);
    const registry = new RepositoryRegistry(reposDir(repos));
    return { registry, repository: requireRepository(registry, account, name) };
  };
  const target = (fullName: string, repos: string | undefined) => open(fullName, repos).repository;

  const rules = program.command('rules').description('access rule sets: which elements the tokens of a set may change (with access controls on)');
  rules
    .command('create')
    .description('create an empty rule set (stopOnFirstMatch true, unmatchedEditable false unless told)')
    .argument('<account/name>')
    .argument('<set>')
    .option('--stop-on-first-match <bool>', 'true: the first matching rule decides; false: any matching rule that denies decides')
    .option('--unmatched-editable <bool>', 'whether an element no rule matches may be changed')
    .addOption(reposOption())
    .action(async (fullName: string, set: string, options) => {
      printJson(
        await createRuleSet(target(fullName, options.repos), set, {
          stopOnFirstMatch: options.stopOnFirstMatch === undefined ? undefined : parseBoolean(options.stopOnFirstMatch, '--stop-on-first-match'),
          unmatchedEditable: options.unmatchedEditable === undefined ? undefined : parseBoolean(options.unmatchedEditable, '--unmatched-editable'),
        }),
      );
    });
  rules
    .command('set')
    .description("change a rule set's switches")
    .argument('<account/name>')
    .argument('<set>')
    .option('--stop-on-first-match <bool>')
    .option('--unmatched-editable <bool>')
    .addOption(reposOption())
    .action(async (fullName: string, set: string, options) => {
      const switches: { stopOnFirstMatch?: boolean; unmatchedEditable?: boolean } = {};
      if (options.stopOnFirstMatch !== undefined) switches.stopOnFirstMatch = parseBoolean(options.stopOnFirstMatch, '--stop-on-first-match');
      if (options.unmatchedEditable !== undefined) switches.unmatchedEditable = parseBoolean(options.unmatchedEditable, '--unmatched-editable');
      if (Object.keys(switches).length === 0) throw new ServiceError('invalid_argument', 'give --stop-on-first-match or --unmatched-editable');
      printJson(await setRuleSetSwitches(target(fullName, options.repos), set, switches));
    });
  rules
    .command('add')
    .description('add a rule: key Is|StartsWith|EndsWith|Contains TEXT, or value Resolves|DoesNotResolve CONTEXT (a;*;b) or ContainsAny|ContainsAll|DoesNotContain ITEMS (a,b)')
    .argument('<account/name>')
    .argument('<set>')
    .argument('<target>', 'key or value')
    .argument('<match>')
    .argument('<text>')
    .requiredOption('--can-edit <bool>', 'whether what the rule matches may be changed')
    .option('--priority <n>', 'where to insert it, 1 = first (else last)')
    .addOption(reposOption())
    .action(async (fullName: string, set: string, kind: string, match: string, text: string, options) => {
      const repository = target(fullName, options.repos);
      const levels = (await repository.headSnapshot()).settings.levels.length;
      const rule = parseRule(kind, match, text, parseBoolean(options.canEdit, '--can-edit'), levels);
      printJson(await addRule(repository, set, rule, options.priority === undefined ? undefined : parseNumber(options.priority, '--priority')));
    });
  rules
    .command('move')
    .description('move the rule at one priority to another')
    .argument('<account/name>')
    .argument('<set>')
    .argument('<from>')
    .argument('<to>')
    .addOption(reposOption())
    .action(async (fullName: string, set: string, from: string, to: string, options) => {
      printJson(await moveRule(target(fullName, options.repos), set, parseNumber(from, 'the priority'), parseNumber(to, 'the priority')));
    });
  rules
    .command('delete')
    .description('delete the rule at a priority, or with no priority the whole set (refused while a token is assigned to it)')
    .argument('<account/name>')
    .argument('<set>')
    .argument('[priority]')
    .addOption(reposOption())
    .action(async (fullName: string, set: string, priority: string | undefined, options) => {
      const repository = target(fullName, options.repos);
      if (priority !== undefined) {
        printJson(await deleteRule(repository, set, parseNumber(priority, 'the priority')));
        return;
      }
      const tokens = new TokenService(new TokenStore(reposDir(options.repos)));
      printJson(await deleteRuleSet(repository, set, tokens.assignedTo(repository, set)));
    });
  rules
    .command('list')
    .description('the rule sets and their rules, as JSON')
    .argument('<account/name>')
    .addOption(reposOption())
    .action(async (fullName: string, options) => {
      printJson(await listRuleSets(target(fullName, options.repos)));
    });

  const groups = program.command('context-group').description('context groups: an item of a level standing for other items of the level');
  groups
    .command('create')
    .argument('<account/name>')
    .argument('<level>')
    .argument('<group>')
    .argument('[members...]')
    .addOption(reposOption())
    .action(async (fullName: string, level: string, group: string, members: string[], options) => {
      printJson(await createContextGroup(target(fullName, options.repos), level, group, members));
    });
  const memberCommands = [
    ['add', 'add an item of the level to a group', addGroupMember],
    ['remove', 'take an item out of a group', removeGroupMember],
  ] as const;
  for (const [name, description, change] of memberCommands) {
    groups
      .command(name)
      .description(description)
      .argument('<account/name>')
      .argument('<level>')
      .argument('<group>')
      .argument('<member>')
      .addOption(reposOption())
      .action(async (fullName: string, level: string, group: string, member: string, options) => {
        printJson(await change(target(fullName, options.repos), level, group, member));
      });
  }
  groups
    .command('delete')
    .description('delete a group no value or file names')
    .argument('<account/name>')
    .argument('<level>')
    .argument('<group>')
    .addOption(reposOption())
    .action(async (fullName: string, level: string, group: string, options) => {
      printJson(await deleteContextGroup(target(fullName, options.repos), level, group));
    });
  groups
    .command('list')
    .argument('<account/name>')
    .addOption(reposOption())
    .action(async (fullName: string, options) => {
      printJson(await listContextGroups(target(fullName, options.repos)));
    });
}
