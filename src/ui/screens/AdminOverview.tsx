/**
 * A repository seen through the admin API, for an admin token on a repository the public API
 * will not show without a client token (a private one): its record, tags (with their commits),
 * security groups, and creating a tag. Keys and values stay behind the repository's client token:
 * the admin API has no read of them, so the console shows none.
 */
import type { RepoRef } from '../api';
import { adminGroups, adminRecord, adminTags, type AdminSession } from '../admin';
import { CodeCell, CodeRowHeader, Empty, formatDate, Loaded, shortId, Table, useLoad } from '../components';
import { CreateTag } from './CreateTag';
import { ReadersScreen } from './Readers';
import { SettingsList } from './Settings';

export function AdminOverview({ repo, admin }: { repo: RepoRef; admin: AdminSession }) {
  const [record] = useLoad(() => adminRecord(admin, repo), [repo.account, repo.repository, admin.token]);
  const [tags, reloadTags] = useLoad(() => adminTags(admin, repo), [repo.account, repo.repository, admin.token]);
  const [groups] = useLoad(() => adminGroups(admin, repo), [repo.account, repo.repository, admin.token]);

  return (
    <div class="overview" data-testid="admin-overview">
      <h2>With your admin token</h2>
      <p class="hint">
        The admin API shows this repository's settings, tags and security groups; its keys need a client token.
      </p>
      <section aria-labelledby="admin-settings-title">
        <h3 id="admin-settings-title">Settings</h3>
        <Loaded load={record} what="the settings">
          {(r) => ('error' in r ? <p class="error-inline">{r.message}</p> : <SettingsList record={r} brief />)}
        </Loaded>
      </section>
      <section aria-labelledby="admin-tags-title">
        <h3 id="admin-tags-title">Tags</h3>
        <Loaded load={tags} what="the tags">
          {(list) =>
            list.length === 0 ? (
              <Empty>No tags.</Empty>
            ) : (
              <Table columns={['Tag', 'Comment', 'Commit', 'Created']}>
                {list.map((tag) => (
                  <tr key={tag.name} data-tag={tag.name}>
                    <CodeRowHeader>{tag.name}</CodeRowHeader>
                    <td>{tag.message}</td>
                    <CodeCell>{shortId(tag.commitId)}</CodeCell>
                    <td>{formatDate(tag.created)}</td>
                  </tr>
                ))}
              </Table>
            )
          }
        </Loaded>
        <CreateTag repo={repo} admin={admin} onCreated={reloadTags} />
      </section>
      <section aria-labelledby="admin-groups-title">
        <h3 id="admin-groups-title">Security groups</h3>
        <Loaded load={groups} what="the security groups">
          {(list) =>
            list.length === 0 ? (
              <Empty>No security groups.</Empty>
            ) : (
              <ul>
                {list.map((g) => (
                  <li key={g.name}>
                    <code>{g.name}</code>: {g.keys} keys, {g.files} files
                  </li>
                ))}
              </ul>
            )
          }
        </Loaded>
      </section>
      <ReadersScreen repo={repo} admin={admin} />
    </div>
  );
}
