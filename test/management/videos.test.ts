import assert from 'node:assert/strict';
import fs from 'node:fs';
import { parseVideoId } from '../../lib/ids';
import { makeClip } from '../support/media';
import { allRenditionsReady, putFile, uploadFormA, waitForVideo, workflowRunning } from '../support/flow';
import { startStack, type Stack } from '../support/stack';
import { eventually, ffmpegProcesses, videoObjects } from './helpers';

const uuidOf = (id: string) => parseVideoId(id)!;

// A 720p source (four rungs) whose renditions take seconds at the slow preset. 12 s, not 20:
// the rungs keep their relative pace (the 240p rung is ready long before 720p), the encoding
// killed or finished before the delete is 40% shorter, and other files already make this clip.
const BIG = { width: 1280, height: 720, seconds: 12 };

describe('Video management: PATCH and DELETE', function () {
  let s: Stack;
  let clip: string;
  before(async function () {
    this.timeout(180_000);
    // A slow preset makes each rendition take seconds, so a delete can land while ffmpeg runs.
    [s, clip] = await Promise.all([startStack({ env: { X264_PRESET: 'slow' } }), makeClip({ width: 320, height: 240, seconds: 2 })]);
  });

  async function pendingVideo(extra: Record<string, unknown> = {}): Promise<string> {
    const r = await s.post('/v1/upload/init', { filename: 'p.mp4', size: 1000, content_type: 'video/mp4', ...extra });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.video_id;
  }

  describe('PATCH /videos/{id}', () => {
    it('updates title, description, visibility, folder and tags and answers with the read shape', async () => {
      const id = await pendingVideo({ tags: ['old'] });
      const folder = await s.post('/v1/folders', { name: 'Talks' });
      assert.equal(folder.status, 201);
      const r = await s.patch(`/v1/videos/${id}`, {
        title: '  Keynote  ',
        description: 'Opening talk',
        visibility: 'private',
        folder_id: folder.body.id,
        tags: ['conf', 'keynote', 'conf'],
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.id, id);
      assert.equal(r.body.title, 'Keynote');
      assert.equal(r.body.description, 'Opening talk');
      assert.equal(r.body.visibility, 'private');
      assert.equal(r.body.folder_id, folder.body.id);
      assert.deepEqual(r.body.tags, ['conf', 'keynote']);
      assert.equal(r.body.status, 'pending_upload');
      const again = await s.get(`/v1/videos/${id}`);
      assert.deepEqual(again.body.tags, ['conf', 'keynote']);
      const tags = await s.get('/v1/tags');
      assert.deepEqual(tags.body.data.map((t: { name: string }) => t.name).sort(), ['conf', 'keynote', 'old']);
    });

    it('null clears the description and moves the video to the root; other fields stay', async () => {
      const folder = await s.post('/v1/folders', { name: 'Inbox' });
      const id = await pendingVideo({ title: 'Stay', description: 'x', folder_id: folder.body.id, tags: ['a'] });
      const r = await s.patch(`/v1/videos/${id}`, { description: null, folder_id: null });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.description, null);
      assert.equal(r.body.folder_id, null);
      assert.equal(r.body.title, 'Stay');
      assert.deepEqual(r.body.tags, ['a']);
      const cleared = await s.patch(`/v1/videos/${id}`, { tags: [] });
      assert.deepEqual(cleared.body.tags, []);
    });

    it('400 for unknown fields and out-of-range values, naming each field; nothing changes', async () => {
      const id = await pendingVideo({ title: 'Original' });
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ status: 'ready' }, '(body)'],
        [{ title: '' }, 'title'],
        [{ title: '   ' }, 'title'],
        [{ title: 'x'.repeat(201) }, 'title'],
        [{ description: 'x'.repeat(5001) }, 'description'],
        [{ visibility: 'secret' }, 'visibility'],
        [{ tags: 'a,b' }, 'tags'],
        [{ folder_id: 42 }, 'folder_id'],
      ];
      for (const [body, field] of cases) {
        const r = await s.patch(`/v1/videos/${id}`, body);
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.equal(r.body.error.code, 'invalid_parameters');
        assert.ok(r.body.error.details.some((d: { field: string }) => d.field === field), `${JSON.stringify(body)} → ${JSON.stringify(r.body.error.details)}`);
      }
      assert.equal((await s.patch(`/v1/videos/${id}`, { title: 'x'.repeat(200), description: 'y'.repeat(5000) })).status, 200);
      assert.equal((await s.get(`/v1/videos/${id}`)).body.visibility, 'unlisted');
    });

    it("400 for a folder of another workspace or none; 404 for another workspace's video; 403 for a read key", async () => {
      const id = await pendingVideo();
      const other = await s.newWorkspace();
      const theirs = await s.post('/v1/folders', { name: 'Theirs' }, other.fullKey);
      for (const folder_id of [theirs.body.id, 'fld_00000000000000000000000000000000', 'nope']) {
        const r = await s.patch(`/v1/videos/${id}`, { folder_id });
        assert.equal(r.status, 400, folder_id);
        assert.equal(r.body.error.details[0].field, 'folder_id');
      }
      assert.equal((await s.patch(`/v1/videos/${id}`, { title: 'x' }, other.fullKey)).status, 404);
      const ro = await s.patch(`/v1/videos/${id}`, { title: 'x' }, s.ws.readKey);
      assert.equal(ro.status, 403);
      assert.equal(ro.body.error.code, 'insufficient_scope');
    });
  });

  describe('DELETE /videos/{id}', () => {
    async function assertGone(id: string): Promise<void> {
      const uuid = uuidOf(id);
      assert.equal((await s.get(`/v1/videos/${id}`)).status, 404, 'a 404 at once');
      assert.equal((await s.del(`/v1/videos/${id}`)).status, 404, 'a second delete is a 404');
      const listed = await s.get('/v1/videos?limit=100');
      assert.ok(!listed.body.data.some((v: { id: string }) => v.id === id), 'not listed');
      await eventually(async () => !(await s.db('videos').where({ id: uuid }).first()), 60_000, 'the row to be purged');
      assert.deepEqual(await videoObjects(s, uuid), []);
      const event = await s.db('events').where({ video_id: uuid, type: 'video.deleted' }).first();
      assert.ok(event, 'video.deleted was emitted');
    }

    it('while pending_upload: the uploaded-but-not-completed original is removed too', async () => {
      const init = await s.post('/v1/upload/init', { filename: 'pending.mp4', size: fs.statSync(clip).size, content_type: 'video/mp4' });
      const put = await putFile(init.body.upload_url, clip, 'video/mp4', init.body.upload_headers);
      assert.equal(put.status, 200);
      const id = init.body.video_id;
      assert.equal((await videoObjects(s, uuidOf(id))).length, 1);
      const r = await s.del(`/v1/videos/${id}`);
      assert.equal(r.status, 204);
      assert.equal(r.text, '');
      await assertGone(id);
    });

    it('when ready: playlists, segments, thumbnail and original are removed', async () => {
      const { id } = await uploadFormA(s, clip);
      await waitForVideo(s, id, allRenditionsReady);
      assert.ok((await videoObjects(s, uuidOf(id))).some((k) => k.endsWith('master.m3u8')));
      assert.equal((await s.del(`/api/v1/videos/${id}`)).status, 204);
      await assertGone(id);
    });

    it('while a rendition is encoding: ffmpeg is killed and nothing is left behind', async function () {
      this.timeout(240_000);
      const big = await makeClip(BIG);
      const { id } = await uploadFormA(s, big);
      const uuid = uuidOf(id);
      await waitForVideo(s, id, (v) => v.renditions?.some((r: { status: string }) => r.status === 'processing'), 120_000);
      await eventually(async () => (await ffmpegProcesses(uuid)).length > 0, 60_000, 'ffmpeg to run for the video');
      const r = await s.del(`/v1/videos/${id}`);
      assert.equal(r.status, 204);
      await assertGone(id);
      assert.deepEqual(await ffmpegProcesses(uuid), [], 'no ffmpeg still runs for the video');
      // Nothing was written after the deletion either (a late segment upload would recreate files).
      await new Promise((res) => setTimeout(res, 2000));
      assert.deepEqual(await videoObjects(s, uuid), []);
    });

    it('when ready while the higher rungs still encode: they are killed and nothing is left behind', async function () {
      this.timeout(240_000);
      const big = await makeClip(BIG);
      const { id } = await uploadFormA(s, big);
      const uuid = uuidOf(id);
      await waitForVideo(s, id, (v) => v.status === 'ready' && v.renditions.some((r: { status: string }) => r.status === 'processing'), 180_000);
      await eventually(async () => (await ffmpegProcesses(uuid)).length > 0, 60_000, 'ffmpeg to run for the video');
      assert.equal((await s.del(`/v1/videos/${id}`)).status, 204);
      await assertGone(id);
      assert.deepEqual(await ffmpegProcesses(uuid), [], 'no ffmpeg still runs for the video');
      await new Promise((res) => setTimeout(res, 2000));
      assert.deepEqual(await videoObjects(s, uuid), []);
    });

    it("404 for another workspace's video and 403 for a read key; the video stays", async () => {
      const id = await pendingVideo();
      const other = await s.newWorkspace();
      assert.equal((await s.del(`/v1/videos/${id}`, other.fullKey)).status, 404);
      assert.equal((await s.del(`/v1/videos/${id}`, s.ws.readKey)).status, 403);
      assert.equal((await s.get(`/v1/videos/${id}`)).status, 200);
    });

    it('still deletes when the workflow is no longer running (signalWithStart)', async () => {
      const id = await pendingVideo();
      const uuid = uuidOf(id);
      // The workflow is started just after init answers (the start outbox): lose it once it runs.
      await workflowRunning(s, uuid);
      await s.temporal.workflow.getHandle(`video-${uuid}`).terminate('test: lost workflow');
      assert.equal((await s.del(`/v1/videos/${id}`)).status, 204);
      await assertGone(id);
    });
  });
});
