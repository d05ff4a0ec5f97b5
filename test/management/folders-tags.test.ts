import assert from 'node:assert/strict';
import { startStack, type Stack } from '../support/stack';

describe('Folders, tags and the list filters', function () {
  let s: Stack;
  before(async function () {
    this.timeout(120_000);
    s = await startStack({ workers: ['workflow'] });
  });

  const folder = async (name: string, parent_id?: string | null) => {
    const r = await s.post('/v1/folders', { name, ...(parent_id !== undefined ? { parent_id } : {}) });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body as { id: string; name: string; parent_id: string | null; created_at: string; updated_at: string };
  };
  const video = async (extra: Record<string, unknown> = {}) => {
    const r = await s.post('/v1/upload/init', { filename: 'f.mp4', size: 1000, content_type: 'video/mp4', ...extra });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.video_id as string;
  };
  const ids = (r: { body: { data: Array<{ id: string }> } }) => r.body.data.map((x) => x.id).sort();

  describe('folders', () => {
    it('creates, reads, renames and lists folders, nested by parent_id', async () => {
      const root = await folder('  Marketing ');
      assert.match(root.id, /^fld_[0-9a-f]{32}$/);
      assert.equal(root.name, 'Marketing');
      assert.equal(root.parent_id, null);
      assert.deepEqual(Object.keys(root).sort(), ['created_at', 'id', 'name', 'parent_id', 'updated_at']);
      const child = await folder('2026', root.id);
      assert.equal(child.parent_id, root.id);
      assert.deepEqual((await s.get(`/v1/folders/${child.id}`)).body, child);

      const renamed = await s.patch(`/v1/folders/${child.id}`, { name: 'Campaign 2026' });
      assert.equal(renamed.status, 200);
      assert.equal(renamed.body.name, 'Campaign 2026');
      assert.equal(renamed.body.parent_id, root.id);

      assert.deepEqual(ids(await s.get(`/v1/folders?parent_id=${root.id}`)), [child.id]);
      const top = await s.get('/v1/folders?parent_id=root');
      assert.ok(top.body.data.some((f: { id: string }) => f.id === root.id));
      assert.ok(!top.body.data.some((f: { id: string }) => f.id === child.id));
      const all = await s.get('/v1/folders');
      assert.ok(all.body.data.some((f: { id: string }) => f.id === child.id));
      // Moving to the root.
      const moved = await s.patch(`/v1/folders/${child.id}`, { parent_id: null });
      assert.equal(moved.body.parent_id, null);
    });

    it('refuses a move that would make a cycle: into itself, its child or a deeper descendant', async () => {
      const a = await folder('a');
      const b = await folder('b', a.id);
      const c = await folder('c', b.id);
      for (const target of [a.id, b.id, c.id]) {
        const r = await s.patch(`/v1/folders/${a.id}`, { parent_id: target });
        assert.equal(r.status, 400, target);
        assert.equal(r.body.error.code, 'folder_cycle');
      }
      assert.equal((await s.get(`/v1/folders/${a.id}`)).body.parent_id, null, 'unchanged');
      // Moving a leaf elsewhere in its own tree is fine.
      const ok = await s.patch(`/v1/folders/${c.id}`, { parent_id: a.id });
      assert.equal(ok.status, 200);
      assert.equal(ok.body.parent_id, a.id);
    });

    it('two concurrent moves cannot together make a loop', async () => {
      const x = await folder('x');
      const y = await folder('y');
      const [r1, r2] = await Promise.all([s.patch(`/v1/folders/${x.id}`, { parent_id: y.id }), s.patch(`/v1/folders/${y.id}`, { parent_id: x.id })]);
      assert.deepEqual([r1.status, r2.status].sort(), [200, 400]);
    });

    it('deleting a folder moves its videos to the root and its subfolders to its parent', async () => {
      const parent = await folder('parent');
      const doomed = await folder('doomed', parent.id);
      const sub = await folder('sub', doomed.id);
      const inDoomed = await video({ folder_id: doomed.id });
      const inSub = await video({ folder_id: sub.id });
      const r = await s.del(`/v1/folders/${doomed.id}`);
      assert.equal(r.status, 204);
      assert.equal((await s.get(`/v1/folders/${doomed.id}`)).status, 404);
      assert.equal((await s.get(`/v1/folders/${sub.id}`)).body.parent_id, parent.id);
      assert.equal((await s.get(`/v1/videos/${inDoomed}`)).body.folder_id, null);
      assert.equal((await s.get(`/v1/videos/${inSub}`)).body.folder_id, sub.id);
      assert.equal((await s.del(`/v1/folders/${doomed.id}`)).status, 404);
    });

    it('400 for bad bodies and foreign parents, 404 for other workspaces and malformed ids, 403 for read keys', async () => {
      const mine = await folder('mine');
      const other = await s.newWorkspace();
      const theirs = (await s.post('/v1/folders', { name: 'theirs' }, other.fullKey)).body;
      for (const body of [{}, { name: '' }, { name: 'x'.repeat(256) }, { name: 'ok', color: 'red' }, { name: 'ok', parent_id: theirs.id }]) {
        const r = await s.post('/v1/folders', body);
        assert.equal(r.status, 400, JSON.stringify(body));
      }
      assert.equal((await s.patch(`/v1/folders/${mine.id}`, { parent_id: theirs.id })).status, 400);
      assert.equal((await s.patch(`/v1/folders/${mine.id}`, { nope: 1 })).status, 400);
      for (const p of [`/v1/folders/${theirs.id}`, '/v1/folders/nope', '/v1/folders/fld_00000000000000000000000000000000']) {
        assert.equal((await s.get(p)).status, 404, p);
        assert.equal((await s.patch(p, { name: 'z' })).status, 404, p);
        assert.equal((await s.del(p)).status, 404, p);
      }
      assert.ok(!(await s.get('/v1/folders')).body.data.some((f: { id: string }) => f.id === theirs.id));
      assert.equal((await s.get('/v1/folders', s.ws.readKey)).status, 200);
      assert.equal((await s.post('/v1/folders', { name: 'ro' }, s.ws.readKey)).status, 403);
    });
  });

  describe('tags', () => {
    it('creates (201), returns an existing name (200), lists and deletes tags', async () => {
      const created = await s.post('/v1/tags', { name: 'travel' });
      assert.equal(created.status, 201);
      assert.match(created.body.id, /^tag_[0-9a-f]{32}$/);
      assert.deepEqual(Object.keys(created.body).sort(), ['created_at', 'id', 'name']);
      const again = await s.post('/v1/tags', { name: ' travel ' });
      assert.equal(again.status, 200);
      assert.deepEqual(again.body, created.body);
      assert.ok((await s.get('/v1/tags')).body.data.some((t: { id: string }) => t.id === created.body.id));

      const id = await video({ tags: ['travel', 'food'] });
      assert.equal((await s.del(`/v1/tags/${created.body.id}`)).status, 204);
      assert.deepEqual((await s.get(`/v1/videos/${id}`)).body.tags, ['food'], 'removed from videos');
      assert.ok(!(await s.get('/v1/tags')).body.data.some((t: { id: string }) => t.id === created.body.id));
      assert.equal((await s.del(`/v1/tags/${created.body.id}`)).status, 404);
    });

    it('400 for bad names, 404 across workspaces', async () => {
      for (const body of [{}, { name: '' }, { name: 'x'.repeat(65) }, { name: 'a', extra: true }]) {
        assert.equal((await s.post('/v1/tags', body)).status, 400, JSON.stringify(body));
      }
      const other = await s.newWorkspace();
      const theirs = (await s.post('/v1/tags', { name: 'secret' }, other.fullKey)).body;
      assert.equal((await s.del(`/v1/tags/${theirs.id}`)).status, 404);
      assert.ok(!(await s.get('/v1/tags')).body.data.some((t: { name: string }) => t.name === 'secret'));
    });
  });

  describe('GET /videos filters', () => {
    it('filters by folder_id (and root) and by tag, combined with pagination', async () => {
      const f = await folder('filtered');
      const a = await video({ folder_id: f.id, tags: ['cats'] });
      const b = await video({ folder_id: f.id, tags: ['dogs'] });
      const c = await video({ tags: ['cats'] });
      assert.deepEqual(ids(await s.get(`/v1/videos?folder_id=${f.id}`)), [a, b].sort());
      assert.deepEqual(ids(await s.get('/v1/videos?tag=cats&limit=100')).filter((x) => [a, b, c].includes(x)), [a, c].sort());
      assert.deepEqual(ids(await s.get(`/v1/videos?folder_id=${f.id}&tag=cats`)), [a]);
      const root = ids(await s.get('/v1/videos?folder_id=root&limit=100'));
      assert.ok(root.includes(c) && !root.includes(a));

      const page1 = await s.get(`/v1/videos?folder_id=${f.id}&limit=1`);
      assert.equal(page1.body.has_more, true);
      const page2 = await s.get(`/v1/videos?folder_id=${f.id}&limit=1&cursor=${page1.body.next_cursor}`);
      assert.equal(page2.body.has_more, false);
      assert.deepEqual([...ids(page1), ...ids(page2)].sort(), [a, b].sort());

      // The filters follow PATCH at once.
      await s.patch(`/v1/videos/${c}`, { folder_id: f.id, tags: ['dogs'] });
      assert.deepEqual(ids(await s.get(`/v1/videos?folder_id=${f.id}&tag=dogs`)), [b, c].sort());
      assert.deepEqual(ids(await s.get(`/v1/videos?folder_id=${f.id}&tag=cats`)), [a]);
    });
  });
});
