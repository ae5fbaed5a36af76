/**
 * Why a key resolves as it does for a context: `GET /rest/explain/{account}/{repository}` with
 * `KeyName` and `Context` (README "Explain"). Shows the winner and why, every value of the key
 * with whether it qualified, its weight and how each level matched, and (with the repository's
 * client token) whether that token could change the value and which rule decides.
 */
import { explainKey, type ExplainAnswer, type RepoRef } from '../api';
import { CodeRowHeader, Loaded, Table, useLoad, ValueShown } from '../components';

type LevelMatch = NonNullable<ExplainAnswer['values']>[number]['levels'][number];

const MATCH_TEXT: Record<LevelMatch['matches'], string> = {
  item: 'the item itself',
  group: 'a group holding it',
  wildcard: 'wildcard',
  none: 'does not match',
};

export function ExplainPanel({
  repo,
  keyName,
  context,
  id,
}: {
  repo: RepoRef;
  keyName: string;
  context: string;
  id: string;
}) {
  const [load] = useLoad(() => explainKey(repo, keyName, context), [repo.account, repo.repository, keyName, context]);
  return (
    <div class="explain" id={id} data-testid="explanation">
      <Loaded load={load} what={`the explanation of ${keyName}`}>
        {(answer) => (
          <>
            {answer.resolved ? (
              <p>
                For <code>{answer.context}</code> the value of{' '}
                <code data-testid="explain-winner">{answer.resolved.context}</code> wins (weight{' '}
                {answer.resolved.weight}): {answer.resolved.why}.
              </p>
            ) : (
              <p>{answer.exists ? 'No value of this key qualifies for this context.' : 'There is no such key.'}</p>
            )}
            {answer.values && answer.values.length > 0 && (
              <Table
                class="candidates"
                caption={`Candidate values of ${keyName}`}
                columns={['Value of context', 'Value', 'Outcome', 'How each level matched']}
              >
                {answer.values.map((v) => {
                  const won = answer.resolved?.context === v.context && v.qualifies;
                  return (
                    <tr key={v.context} data-candidate={v.context} class={won ? 'winner' : undefined}>
                      <CodeRowHeader>{v.context}</CodeRowHeader>
                      <td class="value">
                        <ValueShown lockedBy={v.encryption} active={v.active}>
                          {v.value ?? 'null'}
                        </ValueShown>
                      </td>
                      <td>
                        {won ? <strong>wins</strong> : v.qualifies ? 'qualifies, lighter' : 'does not qualify'}
                        {v.weight !== null && <> · weight {v.weight}</>}
                        {!v.qualifies && <div class="hint">{v.why}</div>}
                      </td>
                      <td>
                        <ul class="levels">
                          {v.levels.map((l) => (
                            <li key={l.level}>
                              {l.level}: <code>{l.item}</code> — {MATCH_TEXT[l.matches]}
                              {l.group && <span class="hint"> (group of {l.group.members.join(', ')})</span>}
                              {l.weight > 0 && <span class="hint"> +{l.weight}</span>}
                            </li>
                          ))}
                        </ul>
                      </td>
                    </tr>
                  );
                })}
              </Table>
            )}
            {answer.write && (
              <p data-testid="explain-write">
                Your token <code>{answer.write.token}</code> {answer.write.canChange ? 'can' : 'cannot'} change this
                value at <code>{answer.context}</code>
                {answer.write.ruleSet ? ` (rule set ${answer.write.ruleSet})` : ''}: {answer.write.decidedBy}.
              </p>
            )}
          </>
        )}
      </Loaded>
    </div>
  );
}
