/**
 * A repository's settings (its listing record), tags (`/rest/info` with `Tags`; restore one with
 * `/rest/restore`, previewed first as a dry run and confirmed on the previewed head) and security groups (those its keys and files name, from `/rest/export` and
 * `/rest/info`). Creating a tag has no endpoint of the public API: it belongs to the admin API,
 * so it needs an admin token (CreateTag.tsx).
 */
import { exportRepo, listRepositories, sameRepo, type RepoInfo, type TagInfo } from '../api';
import { CodeRowHeader, Empty, formatDate, Loaded, RollbackOutcome, Table, useLoad } from '../components';
import type { RepoProps } from './Repository';
import { PreviewStep } from '../DryRunPreview';
import { useRollback } from '../useRollback';
import { CreateTag } from './CreateTag';
import { SettingsList } from './Settings';

export function OverviewScreen({
  repo,
  admin,
  info,
  onChanged,
}: RepoProps & { info: RepoInfo; onChanged: () => void }) {
  const [record] = useLoad(
    () => listRepositories().then((all) => all.find((r) => sameRepo({ account: r.account, repository: r.name }, repo))),
    [repo.account, repo.repository, info],
  );
  const [exported] = useLoad(() => exportRepo(repo), [repo.account, repo.repository, info]);

  return (
    <div class="overview">
      <section aria-labelledby="settings-title">
        <h2 id="settings-title">Settings</h2>
        <Loaded load={record} what="the settings">
          {(r) => (!r ? <Empty>This repository is not in the listing.</Empty> : <SettingsList record={r} />)}
        </Loaded>
      </section>

      <section aria-labelledby="tags-title">
        <h2 id="tags-title">Tags</h2>
        {info.tags.length === 0 ? (
          <Empty>No tags.</Empty>
        ) : (
          <Table columns={['Tag', 'Comment', 'Created', 'Actions']}>
            {info.tags.map((tag) => (
              <TagRow key={tag.name} tag={tag} repo={repo} onChanged={onChanged} />
            ))}
          </Table>
        )}
        <CreateTag repo={repo} admin={admin} onCreated={onChanged} />
      </section>

      <section aria-labelledby="groups-title">
        <h2 id="groups-title">Security groups</h2>
        <Loaded load={exported} what="the security groups">
          {({ keys }) => {
            const groups = new Map<string, { keys: number; files: number }>();
            for (const k of keys)
              if (k.securityGroup)
                groups.set(k.securityGroup, {
                  ...(groups.get(k.securityGroup) ?? { keys: 0, files: 0 }),
                  keys: (groups.get(k.securityGroup)?.keys ?? 0) + 1,
                });
            for (const f of info.files)
              if (f.secureGroup)
                groups.set(f.secureGroup, {
                  ...(groups.get(f.secureGroup) ?? { keys: 0, files: 0 }),
                  files: (groups.get(f.secureGroup)?.files ?? 0) + 1,
                });
            return groups.size === 0 ? (
              <Empty>No key or file is in a security group.</Empty>
            ) : (
              <Table columns={['Group', { label: 'Keys', num: true }, { label: 'Files', num: true }]}>
                {[...groups].map(([name, count]) => (
                  <tr key={name}>
                    <th scope="row">{name}</th>
                    <td class="num">{count.keys}</td>
                    <td class="num">{count.files}</td>
                  </tr>
                ))}
              </Table>
            );
          }}
        </Loaded>
        <p class="hint">
          Groups no key or file uses yet are listed by <code>cfghub group list</code>.
        </p>
      </section>
    </div>
  );
}

function TagRow({ tag, repo, onChanged }: { tag: TagInfo; repo: RepoProps['repo']; onChanged: () => void }) {
  const step = useRollback(repo, onChanged);
  const { busy, error, preview, done } = step;

  return (
    <>
      <tr>
        <CodeRowHeader>{tag.name}</CodeRowHeader>
        <td>{tag.readme}</td>
        <td>{formatDate(tag.date)}</td>
        <td>
          {!preview && (
            <button
              type="button"
              class="small"
              disabled={busy}
              onClick={() => void step.show({ kind: 'restore', target: tag.name })}
            >
              {busy ? 'Previewing…' : 'Restore…'}
              <span class="visually-hidden"> the keys and files of tag {tag.name}</span>
            </button>
          )}
          <RollbackOutcome done={done} error={error} made="Restored" refused="Restore refused" />
        </td>
      </tr>
      {preview && (
        <tr class="preview-row">
          <td colSpan={4}>
            <PreviewStep
              step={step}
              confirmLabel={`Confirm restore of ${tag.name}`}
              busyLabel="Restoring…"
              backLabel="Cancel"
              refusedLabel={`The server would refuse this restore of ${tag.name}; nothing would be written.`}
              onConfirm={() => void step.confirm()}
            />
          </td>
        </tr>
      )}
    </>
  );
}
