/**
 * The error taxonomy: every error of the layers below the service becomes a
 * ServiceError (asServiceError) with its own status class and fields, never an unknown error the
 * HTTP layer answers with a 500; messages name the repository, never a path.
 */
import { describe, expect, it } from 'vitest';
import { CfghubError, ErrorCode, RenderLimitError } from '../../../src/domain/errors.js';
import { DeltaFormatError, ObjectFormatError, PackFormatError, PackIndexFormatError } from '../../../src/git/errors.js';
import { LayoutError } from '../../../src/layout/errors.js';
import {
  LockBusyError,
  ObjectNotFoundError,
  RepositoryDamagedError,
  RepositoryGoneError,
  StorageFullError,
} from '../../../src/disk/errors.js';
import { asServiceError, DamagedSecretError, FAULT_EVENT_OF, ServiceError } from '../../../src/service/errors.js';
import { HTTP_CODE_OF, STATUS_OF } from '../../../src/http/answer/errors.js';

function answer(error: unknown): {
  status: number;
  code: string;
  message: string;
  fields?: Readonly<Record<string, string>>;
} {
  const known = asServiceError(error);
  if (!known) throw new Error('not translated');
  return {
    status: STATUS_OF[known.code],
    code: HTTP_CODE_OF[known.code],
    message: known.message,
    fields: known.fields,
  };
}

describe('asServiceError', () => {
  it('a sealed text that does not open: 409 repository_damaged naming the repository, the key and the group', () => {
    const got = answer(new DamagedSecretError('a value of key db.password', 'secrets', 'acme/app'));
    expect(got).toMatchObject({ status: 409, code: 'repository_damaged', fields: { repository: 'acme/app' } });
    expect(got.message).toContain('a value of key db.password of repository acme/app');
    expect(got.message).toContain('security group secrets');
  });

  it('a missing object: 409 repository_damaged naming the repository and the object', () => {
    const got = answer(new ObjectNotFoundError('acme/app', 'ab'.repeat(20)));
    expect(got).toMatchObject({
      status: 409,
      code: 'repository_damaged',
      fields: { repository: 'acme/app', object: 'ab'.repeat(20) },
    });
    expect(got.message).toContain('repository acme/app is damaged');
  });

  it.each([
    ['PackFormatError', new PackFormatError('entry at 12 has the unknown type 5')],
    ['PackIndexFormatError', new PackIndexFormatError('pack index is cut short')],
    ['DeltaFormatError', new DeltaFormatError('delta base size does not match its base')],
    ['ObjectFormatError', new ObjectFormatError('malformed tree object')],
  ])('%s met outside the object store (which names the repository): 409 repository_damaged, not 500', (_, error) => {
    expect(answer(error)).toMatchObject({ status: 409, code: 'repository_damaged' });
  });

  it('faults of the disk are logged as such; the rest answer with their own status', () => {
    expect(FAULT_EVENT_OF[asServiceError(new StorageFullError('acme/app', 'no space left on device'))!.code]).toBe(
      'storage-full',
    );
    expect(
      FAULT_EVENT_OF[asServiceError(new RepositoryDamagedError('acme/app', 'ab'.repeat(20), 'cannot be read'))!.code],
    ).toBe('repository-damaged');
    expect(answer(new StorageFullError('acme/app', 'no space left on device'))).toMatchObject({
      status: 507,
      code: 'insufficient_storage',
      fields: { repository: 'acme/app' },
    });
    expect(answer(new RepositoryGoneError('acme/app'))).toMatchObject({ status: 404, code: 'not_found' });
    expect(answer(new LockBusyError('the token store'))).toMatchObject({
      status: 503,
      code: 'unavailable',
      message: 'the token store is busy with other writers; try again',
    });
    expect(answer(new LayoutError('bad YAML', 'keys/a.yaml', 'c'.repeat(40)))).toMatchObject({
      status: 409,
      code: 'repository_content_invalid',
      fields: { file: 'keys/a.yaml' },
    });
    expect(answer(new RenderLimitError(ErrorCode.RenderTooLarge, 'a.conf', 'too large'))).toMatchObject({
      status: 409,
      code: 'render_too_large',
      fields: { file: 'a.conf' },
    });
    const service = new ServiceError(ErrorCode.NotFound, 'no such thing');
    expect(asServiceError(service)).toBe(service);
  });

  it('an error of the system with a fault code counts only with its syscall; an unknown error stays unknown (a 500)', () => {
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), {
      code: 'ENOSPC',
      syscall: 'write',
    });
    expect(answer(full)).toMatchObject({ status: 507, code: 'insufficient_storage' });
    expect(asServiceError(Object.assign(new Error('looks like it'), { code: 'ENOSPC' }))).toBeUndefined();
    expect(asServiceError(new Error('a bug'))).toBeUndefined();
  });

  it('every error of ours has a code and its class name', () => {
    const error = new PackFormatError('x');
    expect(error).toBeInstanceOf(CfghubError);
    expect(error.code).toBe(ErrorCode.PackFormat);
    expect(error.name).toBe('PackFormatError');
  });
});
