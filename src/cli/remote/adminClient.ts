/**
 * The CLI against a remote server: the same Administration as on a folder, done through the
 * server's admin API with an admin token (the one admin client, src/client/admin.ts), one call per
 * operation (the operations' signatures are the interface's). The server runs the same
 * operations, and its JSON errors are turned back into the same ServiceErrors, so a command prints
 * and exits alike both ways. Passwords go only in request bodies.
 */
import { checkTagName, type Administration, type Rollback } from '../../service/admin/administration.js';
import type { DryRunResult } from '../../service/write/dryRun.js';
import { remoteAccessAdministration } from './accessAdminClient.js';
import { AdminApi } from './adminApi.js';

export function remoteAdministration(server: string, token: string | undefined): Administration {
  const api = new AdminApi(server, token);
  return {
    ...remoteAccessAdministration(api),
    createRepository: ({ levels, ...rest }) => api.call((c) => c.createRepository({ ...rest, context: [...levels] })),
    listRepositories: () => api.call((c) => c.listRepositories()),
    changeSettings: (fullName, { requiredApprovals, ...rest }) =>
      api.call((c) =>
        c.changeSettings(fullName, {
          ...rest,
          ...(requiredApprovals ? { requiredApprovals: requiredApprovals.map((rule) => ({ ...rule })) } : {}),
        }),
      ),
    deleteRepository: (fullName) => api.call((c) => c.deleteRepository(fullName)),
    repositoryRecord: (fullName) => api.call((c) => c.repository(fullName)),
    createToken: (fullName, input) => api.call((c) => c.createToken(fullName, input)),
    listTokens: (fullName) => api.call((c) => c.listTokens(fullName)),
    revokeToken: (fullName, label) => api.call((c) => c.revokeToken(fullName, label)),
    createTag: (fullName, tag, comment) => {
      checkTagName(tag);
      return api.call((c) => c.createTag(fullName, { name: tag, ...(comment === undefined ? {} : { comment }) }));
    },
    listTags: (fullName) => api.call((c) => c.listTags(fullName)),
    deleteTag: (fullName, tag) => {
      checkTagName(tag); // before it becomes a URL segment, where `..` would not survive
      return api.call((c) => c.deleteTag(fullName, tag));
    },
    createGroup: (fullName, group, password) => api.call((c) => c.createGroup(fullName, { name: group, password })),
    listGroups: (fullName) => api.call((c) => c.listGroups(fullName)),
    changePassword: (fullName, group, current, next) =>
      api.call((c) => c.changePassword(fullName, group, { current, new: next })),
    deleteGroup: (fullName, group) => api.call((c) => c.deleteGroup(fullName, group)),
    revert: (fullName, commit, rollback) =>
      api.call((c) => c.revert(fullName, revertBodyOf(commit, rollback), rollback.applicationName)),
    restore: (fullName, to, rollback) =>
      api.call((c) => c.restore(fullName, restoreBodyOf(to, rollback), rollback.applicationName)),
    previewRevert: (fullName, commit, rollback, contexts = []) =>
      api.call((c) => c.previewRevert(fullName, revertBodyOf(commit, rollback), contexts)) as Promise<DryRunResult>,
    previewRestore: (fullName, to, rollback, contexts = []) =>
      api.call((c) => c.previewRestore(fullName, restoreBodyOf(to, rollback), contexts)) as Promise<DryRunResult>,
    schemas: async (fullName) => (await api.call((c) => c.schemas(fullName))).schemas,
    setSchemas: (fullName, schemas, change) =>
      api.call((c) =>
        c.setSchemas(fullName, { schemas, ...(change.comment !== undefined ? { comment: change.comment } : {}) }),
      ),
    previewSchemas: (fullName, schemas) =>
      api.call((c) => c.previewSchemas(fullName, { schemas })) as Promise<DryRunResult>,
  };
}

/** A revert's body for the admin API: the commit and the comment. */
function revertBodyOf(commit: string, rollback: Rollback) {
  return { commit, ...(rollback.comment === undefined ? {} : { comment: rollback.comment }) };
}

/** A restore's body for the admin API: the point, the comment, the group it opens with its password. */
function restoreBodyOf(to: string, rollback: Rollback) {
  return {
    to,
    ...(rollback.comment === undefined ? {} : { comment: rollback.comment }),
    ...(rollback.securityGroup === undefined
      ? {}
      : { securityGroup: rollback.securityGroup, password: rollback.password }),
  };
}
