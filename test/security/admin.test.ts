import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomToken } from '../../lib/ids';
import { startStack, type Stack } from '../support/stack';

const root = path.resolve(__dirname, '..', '..');
const run = promisify(execFile);

// Issue 22 item 12: the documented password reset (`account create` on an existing email).
describe('security: admin CLI accounts', function () {
  this.timeout(120_000);
  let s: Stack;
  before(async () => {
    s = await startStack({ workers: [] });
  });
  const admin = (...args: string[]) =>
    run(process.execPath, ['--import', 'tsx', path.join(root, 'bin', 'admin.ts'), ...args], { cwd: root, env: { ...process.env, ...s.env } }).then((r) => r.stdout);

  it('a password reset sets the password and creates no workspace', async () => {
    const email = `reset-${randomToken(4).replace(/[^a-z0-9]/gi, 'x').toLowerCase()}@admin.test`;
    await admin('account', 'create', email, '--password', 'first password 1');
    const person = await s.db('people').where({ email }).first('id', 'password_hash');
    const before = await s.db('memberships').where({ person_id: person.id }).select('workspace_id');
    assert.equal(before.length, 1);
    const workspaces = Number((await s.db('workspaces').count({ n: '*' }))[0].n);

    await admin('account', 'create', email, '--password', 'second password 2');
    const after = await s.db('memberships').where({ person_id: person.id }).select('workspace_id');
    assert.deepEqual(after, before);
    assert.equal(Number((await s.db('workspaces').count({ n: '*' }))[0].n), workspaces);
    assert.notEqual((await s.db('people').where({ id: person.id }).first('password_hash')).password_hash, person.password_hash);
  });

  it('account remove ends the membership and revokes the keys the person made there', async () => {
    const email = `leaver-${randomToken(4).replace(/[^a-z0-9]/gi, 'x').toLowerCase()}@admin.test`;
    await admin('account', 'create', email, '--workspace', s.ws.id, '--role', 'member', '--password', 'leaver password 1');
    const person = await s.db('people').where({ email }).first('id');
    const [key] = await s.db('api_keys').insert({ id: `key_${randomToken(8)}`, workspace_id: s.ws.id, name: 'x', key_hash: randomToken(16), key_prefix: 'vhk_x', access: 'read', created_by: person.id }).returning('id');
    assert.match(await admin('account', 'remove', email, s.ws.id), /removed/);
    assert.equal(await s.db('memberships').where({ person_id: person.id }).first(), undefined);
    assert.ok((await s.db('api_keys').where({ id: key.id }).first('revoked_at')).revoked_at);
  });
});
