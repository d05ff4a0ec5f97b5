import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createDb, type Db } from '../../lib/db';
import { newVideoUuid } from '../../lib/ids';
import { createWorkspace } from '../../lib/keys';
import { type MasterKeys, rewrapContentKeys, unwrapKey, videoContentKey, wrapKey } from '../../lib/protection/keys';
import { loadConfig } from '../../lib/config';
import { testDatabase } from '../support/hooks';

const master = (kid: string) => ({ kid, key: randomBytes(32) });

describe('Content keys wrapped by a master key, and its rotation (SPEC §20)', function () {
  this.timeout(30_000);
  let db: Db;
  let ws: string;

  before(async () => {
    db = createDb((await testDatabase()).url, 2);
    ws = (await createWorkspace(db, 'keys', 'free')).id;
  });
  after(() => db?.destroy());

  async function newVideo(): Promise<string> {
    const id = newVideoUuid();
    await db('videos').insert({ id, workspace_id: ws, title: 't', status: 'ready', filename: 'f.mp4', storage_key: `originals/${id}` });
    return id;
  }

  it('wraps with AES-256-GCM bound to the video: another video id or master does not unwrap', () => {
    const m = master('a');
    const key = randomBytes(16);
    const w = wrapKey(m, 'v1', key);
    assert.deepEqual(unwrapKey(m, 'v1', w), key);
    assert.throws(() => unwrapKey(m, 'v2', w));
    assert.throws(() => unwrapKey(master('a'), 'v1', w));
  });

  it('re-wraps every key under the current master; old kids keep working until then', async () => {
    const a = master('a');
    const b = master('b');
    const ids = [await newVideo(), await newVideo()];
    const before: MasterKeys = { keys: [a], currentKid: 'a' };
    const keys = await Promise.all(ids.map((id) => videoContentKey(db, before, id)));
    assert.deepEqual((await db('video_keys').whereIn('video_id', ids).pluck('master_kid')).sort(), ['a', 'a']);

    // Step 1 of a rotation: b is current, a still configured. (Other test files' stacks, on the
    // same database, wrap with the development master: it is configured too, as every master in
    // use must be, or the rotation stops at the first key it cannot unwrap.)
    const dev = loadConfig({ DATABASE_URL: 'postgres://x/y' }).protection.keys[0];
    await assert.rejects(() => rewrapContentKeys(db, { keys: [b], currentKid: 'b' }), /is not configured/);
    const during: MasterKeys = { keys: [b, a, dev], currentKid: 'b' };
    const n = await rewrapContentKeys(db, during);
    assert.ok(n >= 2);
    assert.deepEqual(await db('video_keys').whereIn('video_id', ids).pluck('master_kid'), ['b', 'b']);
    assert.equal(await rewrapContentKeys(db, during), 0, 'idempotent');
    // Step 2: a is removed; the content keys (what players were given) never changed.
    const after: MasterKeys = { keys: [b], currentKid: 'b' };
    for (const [i, id] of ids.entries()) {
      const row = await db('video_keys').where({ video_id: id }).first();
      assert.deepEqual(unwrapKey(after.keys[0], id, row.wrapped), keys[i]);
    }
  });

  it('reads masters from PLAYBACK_KEY_MASTERS and refuses bad ones', () => {
    const k = randomBytes(32).toString('base64');
    const c = loadConfig({ DATABASE_URL: 'postgres://x/y', PLAYBACK_KEY_MASTERS: `m1:${k},m2:${k}`, PLAYBACK_KEY_MASTER_KID: 'm2' });
    assert.equal(c.protection.currentKid, 'm2');
    assert.equal(c.protection.keys.length, 2);
    assert.throws(() => loadConfig({ DATABASE_URL: 'postgres://x/y', PLAYBACK_KEY_MASTERS: 'm1:c2hvcnQ=' }), /32 bytes/);
    assert.throws(() => loadConfig({ DATABASE_URL: 'postgres://x/y', PLAYBACK_KEY_MASTERS: `m1:${k}`, PLAYBACK_KEY_MASTER_KID: 'zz' }), /not in/);
  });
});
