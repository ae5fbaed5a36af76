/**
 * The access commands: `cfghub rules …` (access rule sets) and `cfghub context-group …`. Each
 * change is one commit. Like the other administrative commands they work on a repositories folder
 * (`--repos`) or on a remote server (`--server`) through the same Administration, so
 * they print and exit alike both ways. `repo set` is an alias of `repo settings`
 * (program.ts).
 */
import type { Command } from 'commander';
import { priorityOf, ruleWords } from '../../service/access/accessRuleSetCommands.js';
import { ServiceError } from '../../service/errors.js';
import { administrationOf, printJson, withTarget } from '../remote/adminTarget.js';

function parseBoolean(text: string, what: string): boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new ServiceError('invalid_argument', `${what} is true or false, got ${JSON.stringify(text)}`);
}

export function addAccessCommands(program: Command): void {
  const switchesOf = (options: { stopOnFirstMatch?: string; unmatchedEditable?: string }) => {
    const switches: { stopOnFirstMatch?: boolean; unmatchedEditable?: boolean } = {};
    if (options.stopOnFirstMatch !== undefined)
      switches.stopOnFirstMatch = parseBoolean(options.stopOnFirstMatch, '--stop-on-first-match');
    if (options.unmatchedEditable !== undefined)
      switches.unmatchedEditable = parseBoolean(options.unmatchedEditable, '--unmatched-editable');
    return switches;
  };

  const rules = program
    .command('rules')
    .description('access rule sets: which elements the tokens of a set may change (with access controls on)');
  withTarget(
    rules
      .command('create')
      .description('create an empty rule set (stopOnFirstMatch true, unmatchedEditable false unless told)')
      .argument('<account/name>')
      .argument('<set>')
      .option(
        '--stop-on-first-match <bool>',
        'true: the first matching rule decides; false: any matching rule that denies decides',
      )
      .option('--unmatched-editable <bool>', 'whether an element no rule matches may be changed'),
  ).action(async (fullName: string, set: string, options) => {
    const admin = administrationOf(fullName, options);
    printJson(await admin.createRuleSet(fullName, set, switchesOf(options)));
  });
  withTarget(
    rules
      .command('set')
      .description("change a rule set's switches")
      .argument('<account/name>')
      .argument('<set>')
      .option('--stop-on-first-match <bool>')
      .option('--unmatched-editable <bool>'),
  ).action(async (fullName: string, set: string, options) => {
    const admin = administrationOf(fullName, options);
    const switches = switchesOf(options);
    if (Object.keys(switches).length === 0)
      throw new ServiceError('invalid_argument', 'give --stop-on-first-match or --unmatched-editable');
    printJson(await admin.setRuleSetSwitches(fullName, set, switches));
  });
  withTarget(
    rules
      .command('add')
      .description(
        'add a rule: key Is|StartsWith|EndsWith|Contains TEXT, or value Resolves|DoesNotResolve CONTEXT (a;*;b) or ContainsAny|ContainsAll|DoesNotContain ITEMS (a,b)',
      )
      .argument('<account/name>')
      .argument('<set>')
      .argument('<target>', 'key or value')
      .argument('<match>')
      .argument('<text>')
      .requiredOption('--can-edit <bool>', 'whether what the rule matches may be changed')
      .option('--priority <n>', 'where to insert it, 1 = first (else last)'),
  ).action(async (fullName: string, set: string, kind: string, match: string, text: string, options) => {
    const admin = administrationOf(fullName, options);
    const rule = ruleWords(kind, match, text, parseBoolean(options.canEdit, '--can-edit'));
    const priority = options.priority === undefined ? undefined : priorityOf(options.priority, '--priority');
    printJson(await admin.addRule(fullName, set, rule, priority));
  });
  withTarget(
    rules
      .command('move')
      .description('move the rule at one priority to another')
      .argument('<account/name>')
      .argument('<set>')
      .argument('<from>')
      .argument('<to>'),
  ).action(async (fullName: string, set: string, from: string, to: string, options) => {
    const admin = administrationOf(fullName, options);
    printJson(await admin.moveRule(fullName, set, priorityOf(from), priorityOf(to)));
  });
  withTarget(
    rules
      .command('delete')
      .description(
        'delete the rule at a priority, or with no priority the whole set (refused while a token is assigned to it)',
      )
      .argument('<account/name>')
      .argument('<set>')
      .argument('[priority]'),
  ).action(async (fullName: string, set: string, priority: string | undefined, options) => {
    const admin = administrationOf(fullName, options);
    const at = priority === undefined ? undefined : priorityOf(priority);
    printJson(at === undefined ? await admin.deleteRuleSet(fullName, set) : await admin.deleteRule(fullName, set, at));
  });
  withTarget(
    rules.command('list').description('the rule sets and their rules, as JSON').argument('<account/name>'),
  ).action(async (fullName: string, options) => {
    printJson(await administrationOf(fullName, options).listRuleSets(fullName));
  });

  const groups = program
    .command('context-group')
    .description('context groups: an item of a level standing for other items of the level');
  withTarget(
    groups
      .command('create')
      .description('create a group of a level, with its first members')
      .argument('<account/name>')
      .argument('<level>')
      .argument('<group>')
      .argument('[members...]'),
  ).action(async (fullName: string, level: string, group: string, members: string[], options) => {
    printJson(await administrationOf(fullName, options).createContextGroup(fullName, level, group, members));
  });
  const memberCommands = [
    ['add', 'add an item of the level to a group', 'addGroupMember'],
    ['remove', 'take an item out of a group', 'removeGroupMember'],
  ] as const;
  for (const [name, description, change] of memberCommands) {
    withTarget(
      groups
        .command(name)
        .description(description)
        .argument('<account/name>')
        .argument('<level>')
        .argument('<group>')
        .argument('<member>'),
    ).action(async (fullName: string, level: string, group: string, member: string, options) => {
      printJson(await administrationOf(fullName, options)[change](fullName, level, group, member));
    });
  }
  withTarget(
    groups
      .command('delete')
      .description('delete a group no value or file names')
      .argument('<account/name>')
      .argument('<level>')
      .argument('<group>'),
  ).action(async (fullName: string, level: string, group: string, options) => {
    printJson(await administrationOf(fullName, options).deleteContextGroup(fullName, level, group));
  });
  withTarget(
    groups.command('list').description('the context groups with their members, as JSON').argument('<account/name>'),
  ).action(async (fullName: string, options) => {
    printJson(await administrationOf(fullName, options).listContextGroups(fullName));
  });
}
