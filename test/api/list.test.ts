import assert from 'node:assert/strict';
import { startStack, type Stack, type Workspace } from '../support/stack';

const READ_FIELDS = [
  'id', 'uuid', 'workspace_id', 'title', 'description', 'visibility', 'status', 'progress', 'duration_seconds', 'width', 'height',
  'size_bytes', 'filename', 'content_type', 'storage_key', 'hls_url', 'thumbnail_url', 'embed_url', 'renditions', 'folder_id', 'tags',
  'created_at', 'updated_at', 'ready_at',
];

describe('GET /videos: keyset pages and filters', function () {
  this.timeout(120_000);
  let s: Stack;
  let ws: Workspace;
  const created: string[] = [];

  const init = async (title: string, extra: Record<string, unknown> = {}) => {
    const r = await s.post('/v1/upload/init', { filename: `${title}.mp4`, size: 100, content_type: 'video/mp4', title, ...extra }, ws.fullKey);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.video_id as string;
  };
  const page = async (q: string) => {
    const r = await s.get(`/v1/videos?${q}`, ws.readKey);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body as { data: Array<Record<string, unknown>>; has_more: boolean; next_cursor: string | null };
  };

  before(async () => {
    s = await startStack({ workers: ['workflow'] });
    ws = await s.newWorkspace();
    for (const t of ['Alpha', 'beta', 'Gamma', 'delta', 'Epsilon', 'zeta', 'Eta']) created.push(await init(t, t === 'zeta' ? { visibility: 'private' } : {}));
  });

  it('pages newest first without repeats or gaps, even when videos arrive between pages', async () => {
    const first = await page('limit=3');
    assert.equal(first.data.length, 3);
    assert.equal(first.has_more, true);
    const late = await init('late arrival');
    const seen = first.data.map((v) => v.id as string);
    let cursor = first.next_cursor;
    while (cursor) {
      const p = await page(`limit=3&cursor=${encodeURIComponent(cursor)}`);
      seen.push(...p.data.map((v) => v.id as string));
      cursor = p.next_cursor;
      if (!p.has_more) assert.equal(p.next_cursor, null);
    }
    assert.deepEqual(seen, [...created].reverse(), 'every video once, newest first; the late one is not in this walk');
    assert.equal((await page('limit=1')).data[0].id, late);
  });

  it('pages oldest first with order=asc', async () => {
    const a = await page('order=asc&limit=4');
    const b = await page(`order=asc&limit=4&cursor=${encodeURIComponent(a.next_cursor!)}`);
    assert.deepEqual([...a.data, ...b.data].map((v) => v.id).slice(0, 7), created);
  });

  it('filters by title (case-insensitive, wildcards literal), status, and visibility', async () => {
    assert.deepEqual((await page('q=ETA')).data.map((v) => v.title).sort(), ['Eta', 'beta', 'zeta']);
    assert.deepEqual((await page('q=%25')).data, [], '% is a character, not a wildcard');
    assert.equal((await page('status=pending_upload&limit=100')).data.length, 8);
    assert.equal((await page('status=uploading&limit=100')).data.length, 8, 'Form B name accepted');
    assert.equal((await page('status=ready')).data.length, 0);
    assert.deepEqual((await page('visibility=private')).data.map((v) => v.title), ['zeta']);
  });

  it('pages a tag newest first and oldest first without repeats or gaps (keyset on the tag index)', async () => {
    const tagged: string[] = [];
    for (let i = 0; i < 5; i++) tagged.push(await init(`tagged ${i}`, { tags: ['pager'] }));
    await init('untagged in between');
    const walk = async (order: string) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const p = await page(`tag=pager&limit=2&order=${order}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        assert.ok(p.data.every((v) => (v.tags as string[]).includes('pager')));
        seen.push(...p.data.map((v) => v.id as string));
        cursor = p.next_cursor;
      } while (cursor);
      return seen;
    };
    assert.deepEqual(await walk('desc'), [...tagged].reverse());
    assert.deepEqual(await walk('asc'), tagged);
    assert.deepEqual((await page('tag=pager&status=failed')).data, [], 'other filters still apply');
    assert.deepEqual((await page('tag=no-such-tag')).data, []);
  });

  it('answers in the full read shape', async () => {
    const v = (await page('limit=1')).data[0];
    for (const f of READ_FIELDS) assert.ok(f in v, `field ${f}`);
    assert.equal(v.status, 'pending_upload');
    assert.equal(v.hls_url, null);
  });

  it('400 for limits out of range, an unknown order and a forged cursor', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'order=sideways', 'status=gone']) {
      const r = await s.get(`/v1/videos?${q}`, ws.readKey);
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error.code, 'invalid_parameters', q);
    }
    for (const cursor of ['garbage', Buffer.from('{"t":"x","i":"y"}').toString('base64url'), Buffer.from("{\"t\":\"2026-01-01T00:00:00Z\",\"i\":\"1' or 1=1--\"}").toString('base64url')]) {
      const r = await s.get(`/v1/videos?cursor=${cursor}`, ws.readKey);
      assert.equal(r.status, 400, cursor);
      assert.equal(r.body.error.code, 'invalid_cursor');
    }
  });

  it("never lists another workspace's videos", async () => {
    const other = await s.newWorkspace();
    const r = await s.get('/v1/videos?limit=100', other.readKey);
    assert.deepEqual(r.body.data, []);
  });
});
