/**
 * A repository's settings (its listing record) as both overviews show them: the public one
 * (Overview.tsx) every setting, the admin one (AdminOverview.tsx) the few that say what the
 * repository is. One list, so a setting reads the same on both.
 */
import type { ComponentChildren } from 'preact';
import type { RepositoryRecord } from '../api';
import { formatDate } from '../components';

const yesNo = (on: boolean) => (on ? 'yes' : 'no');

/** Each setting: its label, how it reads, and whether the admin overview shows it too. */
const SETTINGS: readonly (readonly [string, (r: RepositoryRecord) => ComponentChildren, boolean])[] = [
  ['Description', (r) => r.description ?? <em>none</em>, true],
  ['Context levels', (r) => r.context.join(' › '), true],
  ['Spring alias', (r) => r.alias ?? <em>none</em>, true],
  ['Created', (r) => formatDate(r.created), false],
  [
    'Keys / values',
    (r) => (
      <>
        {r.keyCount} / {r.valueCount}
      </>
    ),
    true,
  ],
  ['Active tokens', (r) => r.userCount, false],
  ['Private', (r) => yesNo(r.isPrivate), true],
  ['Personal', (r) => yesNo(r.isPersonal), false],
  ['Value types checked', (r) => yesNo(r.vdtEnabled), false],
  ['Security groups enabled', (r) => yesNo(r.securityEnabled), false],
  ['Access controls', (r) => yesNo(r.accessControlsEnabled), false],
  ['Context groups', (r) => yesNo(r.contextGroupsEnabled), false],
];

export function SettingsList({ record, brief = false }: { record: RepositoryRecord; brief?: boolean }) {
  return (
    <dl class="settings">
      {SETTINGS.filter(([, , inBrief]) => !brief || inBrief).map(([label, show]) => [
        <dt key={`${label}-t`}>{label}</dt>,
        <dd key={`${label}-d`}>{show(record)}</dd>,
      ])}
    </dl>
  );
}
