import assert from 'node:assert/strict';
import { parseVideoId } from '../../lib/ids';
import { startStack, type Stack } from '../support/stack';

/** SPEC §21: `codecs` per video or as the workspace's default; H.264 always. */
describe('encoding defaults: the workspace default codecs (real API + Postgres + Temporal)', function () {
  this.timeout(120_000);
  let s: Stack;
  before(async () => {
    s = await startStack({ workers: [] });
  });

  async function created(extra: Record<string, unknown> = {}): Promise<{ id: string; codecs: string[] }> {
    const r = await s.post('/v1/upload/init', { filename: 'd.mp4', size: 1000, content_type: 'video/mp4', ...extra });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const v = await s.get(`/v1/videos/${r.body.video_id}`).expect(200);
    return { id: r.body.video_id, codecs: v.body.codecs };
  }

  /** The codecs the video's workflow was started with (absent: H.264 only). */
  async function workflowCodecs(id: string): Promise<string[] | undefined> {
    const handle = s.temporal.workflow.getHandle(`video-${parseVideoId(id)}`);
    for (let i = 0; i < 100; i++) {
      try {
        const history = await handle.fetchHistory();
        const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
        const payload = started?.input?.payloads?.[0]?.data;
        if (payload) return (JSON.parse(Buffer.from(payload).toString('utf8')) as { codecs?: string[] }).codecs;
      } catch {
        // not started yet: the start outbox runs it right after the request
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`workflow of ${id} never started`);
  }

  it('is H.264 only until set; a video without codecs takes it, with H.264 added; its own codecs win', async () => {
    assert.deepEqual((await s.get('/v1/encoding-defaults').expect(200)).body, { default_codecs: ['h264'] });
    assert.deepEqual((await created()).codecs, ['h264']);

    const set = await s.patch('/v1/encoding-defaults', { default_codecs: ['av1', 'hevc', 'av1'] }).expect(200);
    assert.deepEqual(set.body, { default_codecs: ['h264', 'hevc', 'av1'] }, 'H.264 is always kept, first, each codec once');
    assert.deepEqual((await s.get('/v1/encoding-defaults').expect(200)).body, { default_codecs: ['h264', 'hevc', 'av1'] });

    const inherits = await created();
    assert.deepEqual(inherits.codecs, ['h264', 'hevc', 'av1']);
    assert.deepEqual(await workflowCodecs(inherits.id), ['h264', 'hevc', 'av1'], 'the workflow encodes the default codecs');

    const own = await created({ codecs: ['h264'] });
    assert.deepEqual(own.codecs, ['h264'], "the video's own codecs win over the default");
    assert.equal(await workflowCodecs(own.id), undefined);

    // Another workspace keeps its own default.
    const other = await s.newWorkspace();
    assert.deepEqual((await s.get('/v1/encoding-defaults', other.fullKey).expect(200)).body, { default_codecs: ['h264'] });
    // An empty PATCH changes nothing.
    assert.deepEqual((await s.patch('/v1/encoding-defaults', {}).expect(200)).body, { default_codecs: ['h264', 'hevc', 'av1'] });
  });

  it('refuses unknown codecs, an empty list and unknown fields with 400', async () => {
    for (const body of [{ default_codecs: ['vp9'] }, { default_codecs: [] }, { default_codecs: 'av1' }, { codecs: ['av1'] }, { default_codecs: ['h264', 'hevc', 'av1', 'av1'] }]) {
      const r = await s.patch('/v1/encoding-defaults', body);
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
      assert.equal(typeof r.body.error?.code, 'string');
    }
  });
});
