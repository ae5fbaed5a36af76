/**
 * Explain a value: for a key and a context, every value of the key with whether it
 * qualifies and its weight (groups expanded), which one won and why; and, for a token, whether
 * it could change the value at that context and which rule decides. Read-only.
 */
import { decide, type Element } from '../../domain/accessRules.js';
import { formatContext, WILDCARD, type Context } from '../../domain/context.js';
import { contextWeight, groupWeight, levelWeight, requestContext } from '../../domain/resolve.js';
import { keyId } from '../../domain/names.js';
import type { Snapshot } from '../../layout/snapshot.js';
import type { TokenRecord } from '../../disk/records/tokenStore.js';
import type { KeyRing } from '../security/keyRing.js';
import { openValue } from '../security/unsealing.js';

export interface ExplainQuery {
  readonly snapshot: Snapshot;
  readonly keyName: string;
  readonly context: Context;
  readonly ring: KeyRing;
  readonly token?: TokenRecord;
}

export function explain(query: ExplainQuery): Record<string, unknown> {
  const { snapshot, context } = query;
  const levels = snapshot.settings.levels;
  const groups = snapshot.groups();
  const request = requestContext(context, groups);
  const key = snapshot.key(keyId(query.keyName));
  const body: Record<string, unknown> = {
    key: key?.key ?? query.keyName,
    context: formatContext(context),
    contextGroupsEnabled: snapshot.settings.contextGroupsEnabled,
  };
  if (!key) {
    body.exists = false;
    body.resolved = null;
  } else {
    let winner: { context: string; weight: number } | undefined;
    const values = key.values.map((value) => {
      const weight = value.active ? contextWeight(value.context, request) : -1;
      const opened = openValue(key, value, query.ring);
      const levelsOf = value.context.map((item, i) => {
        if (item === WILDCARD) return { level: levels[i], item, matches: 'wildcard', weight: 0 };
        if (item.toLowerCase() === request.items[i])
          return { level: levels[i], item, matches: 'item', weight: levelWeight(i, levels.length) };
        if (groups.isGroup(i, item)) {
          const members = [...groups.spelledMembersOf(i, item)].sort();
          const holds = request.items[i] !== WILDCARD && groups.groupsOf(i, request.items[i]).has(item.toLowerCase());
          return {
            level: levels[i],
            item,
            matches: holds ? 'group' : 'none',
            group: { members },
            weight: holds ? groupWeight(i, levels.length) : 0,
          };
        }
        return { level: levels[i], item, matches: 'none', weight: 0 };
      });
      const text = formatContext(value.context);
      if (weight >= 0 && (!winner || weight > winner.weight)) winner = { context: text, weight };
      return {
        context: text,
        ...(opened ? { value: opened.text } : { encryption: key.securityGroup }),
        active: value.active,
        qualifies: weight >= 0,
        weight: weight >= 0 ? weight : null,
        why: !value.active
          ? 'inactive values never qualify'
          : weight < 0
            ? 'an item names neither the requested item nor a group holding it'
            : 'qualifies',
        levels: levelsOf,
      };
    });
    body.exists = true;
    body.resolved = winner
      ? {
          context: winner.context,
          weight: winner.weight,
          why: 'the heaviest qualifying value wins; one deeper item outweighs every wider level, a group weighs just below an item of its level',
        }
      : null;
    body.values = values.sort((a, b) => (b.weight ?? -1) - (a.weight ?? -1));
  }
  if (query.token)
    body.write = writeAnswer(snapshot, query.token, { kind: 'value', key: key?.key ?? query.keyName, context });
  return body;
}

function writeAnswer(snapshot: Snapshot, token: TokenRecord, element: Element): Record<string, unknown> {
  const base = { token: token.label };
  if (token.readOnly) return { ...base, canChange: false, decidedBy: 'the token is read-only; no rule can widen it' };
  if (token.ruleSet === undefined)
    return { ...base, canChange: true, decidedBy: 'the token has no rule set: full access' };
  if (!snapshot.settings.accessControlsEnabled)
    return {
      ...base,
      ruleSet: token.ruleSet,
      canChange: true,
      decidedBy: 'access controls are off for this repository',
    };
  const set = snapshot.ruleSets.find((s) => s.name.toLowerCase() === token.ruleSet!.toLowerCase());
  if (!set)
    return {
      ...base,
      ruleSet: token.ruleSet,
      canChange: false,
      decidedBy: `rule set ${token.ruleSet} no longer exists`,
    };
  const decision = decide(set, element, snapshot.groups());
  return {
    ...base,
    ruleSet: set.name,
    canChange: decision.editable,
    ...(decision.rule ? { rule: decision.rule } : {}),
    decidedBy: decision.why,
  };
}
