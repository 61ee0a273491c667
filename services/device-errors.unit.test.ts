import assert from 'node:assert/strict';
import { it } from 'node:test';
import { AppError } from '../core/errors.js';
import { OutboundError, type OutboundFailure } from '../core/outbound/client.js';
import { OutboundRefusal } from '../core/outbound/policy.js';
import { SnapshotError } from '../snapshot/seal.js';
import { outbound, outboundHeaders, translate } from './device-errors.js';

const answered = async (call: () => Promise<unknown>): Promise<{ status: number; code: string; field: string | undefined }> => {
  try {
    await call();
  } catch (error) {
    assert.ok(error instanceof AppError, String(error));
    return { status: error.status, code: error.code, field: error.details?.[0]?.field };
  }
  throw new Error('did not fail');
};

it('answers each outbound failure with its status and code, naming the field', async () => {
  const field = 'snapshot_ref.get_url';
  const cases: [OutboundFailure, number, string][] = [
    ['too_large', 413, 'snapshot_too_large'],
    ['timeout', 504, 'upstream_timeout'],
    ['redirect', 502, 'upstream_redirect'],
    ['status', 502, 'upstream_failed'],
    ['network', 502, 'upstream_failed'],
  ];
  for (const [kind, status, code] of cases)
    assert.deepEqual(
      await answered(() => outbound(field, () => Promise.reject(new OutboundError(kind, 'upstream said no')))),
      { status, code, field },
      kind,
    );
  const refused = new OutboundRefusal('private_address', 'host', '10.0.0.1 is a private address');
  assert.deepEqual(await answered(() => outbound(field, () => Promise.reject(refused))), {
    status: 400,
    code: 'snapshot_url_refused',
    field,
  });
  assert.deepEqual(await outbound(field, () => Promise.resolve('bytes')), 'bytes');
  const other = new Error('a bug');
  await assert.rejects(
    outbound(field, () => Promise.reject(other)),
    (error) => error === other,
    'anything else passes through unchanged',
  );
});

it('refuses headers the outbound policy refuses with 400 naming their field', async () => {
  assert.deepEqual(outboundHeaders({ 'x-amz-date': '20260101T000000Z' }, 'snapshot_ref.get_headers'), { 'x-amz-date': '20260101T000000Z' });
  assert.deepEqual(await answered(async () => outboundHeaders({ Host: 'internal' }, 'snapshot_ref.get_headers')), {
    status: 400,
    code: 'snapshot_url_refused',
    field: 'snapshot_ref.get_headers',
  });
});

it('answers a snapshot that does not open with 413 over a cap and 400 otherwise, naming its path', async () => {
  const cases: [SnapshotError, number][] = [
    [new SnapshotError('snapshot_too_large', 'snapshot.body.episodes', 'too many episodes'), 413],
    [new SnapshotError('snapshot_signature_invalid', 'snapshot.signature', 'bad signature'), 400],
    [new SnapshotError('snapshot_invalid', 'snapshot.body', 'not a snapshot'), 400],
  ];
  for (const [error, status] of cases)
    assert.deepEqual(await answered(() => translate(() => Promise.reject(error))), { status, code: error.code, field: error.path });
  const other = new TypeError('a bug');
  await assert.rejects(
    translate(() => Promise.reject(other)),
    (error) => error === other,
  );
});
