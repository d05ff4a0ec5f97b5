/**
 * Records workflow histories from real runs into test/fixtures/histories/ for the replay test.
 * Run after a deliberate, versioned change to workflow code: `npm run record-histories`.
 * Needs the same services as the tests (./scripts/test provisions them).
 */
import fs from 'node:fs';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { isStatus, putFile, uploadFormA, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { runMain } from '../support/main';

const outDir = path.join(__dirname, '..', 'fixtures', 'histories');

async function save(s: Stack, name: string, uuid: string, workflowId = `video-${uuid}`): Promise<void> {
  const handle = s.temporal.workflow.getHandle(workflowId);
  const history = await handle.fetchHistory();
  // Proto3 JSON, the format `temporal workflow show --output json` writes and historyFromJSON reads.
  fs.writeFileSync(path.join(outDir, `${name}.json`), historyToJSON(history));
  console.log(`recorded ${name}: ${history.events?.length} events`);
}

async function main(): Promise<void> {
  fs.mkdirSync(outDir, { recursive: true });
  const s = await startStack({ env: { UPLOAD_URL_TTL_SECONDS: '3', UPLOAD_GRACE_SECONDS: '0' } });
  const clip = await makeClip({ width: 640, height: 360, seconds: 3 });

  // A receiver that fails twice, then accepts: the delivery workflow's retry path.
  let calls = 0;
  const receiver = http.createServer((req, res) => {
    req.resume();
    calls++;
    res.writeHead(calls <= 2 ? 500 : 200).end();
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const hook = await s.post('/v1/webhooks', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['video.uploaded'] }).expect(201);

  // 1. Upload → ready (all rungs), then delete.
  const a = await uploadFormA(s, clip);
  const ready = await waitForVideo(s, a.id, (v) => v.renditions.length > 0 && v.renditions.every((r: { status: string }) => r.status === 'ready'));
  await s.del(`/v1/videos/${a.id}`).expect(204);
  await s.temporal.workflow.getHandle(`video-${ready.uuid}`).result();
  await save(s, 'upload-ready-delete', ready.uuid);
  const deliveries = await s.get(`/v1/webhooks/${hook.body.id}/deliveries`).expect(200);
  const dlv = deliveries.body.data[0].id as string;
  await s.temporal.workflow.getHandle(`delivery-${dlv}`).result();
  await save(s, 'webhook-delivery-500-500-200', '', `delivery-${dlv}`);
  receiver.close();

  // 2. Invalid media → failed, re-upload, retry → ready, then delete.
  const garbage = path.join(outDir, '..', 'garbage.bin');
  fs.writeFileSync(garbage, Buffer.alloc(fs.statSync(clip).size, 'not a video'));
  const b = await uploadFormA(s, garbage);
  const failed = await waitForVideo(s, b.id, isStatus('failed'));
  await putFile(b.uploadUrl, clip);
  await s.post(`/v1/videos/${b.id}/retry`).expect(202);
  await waitForVideo(s, b.id, (v) => v.status === 'ready' && v.renditions.every((r: { status: string }) => r.status === 'ready'));
  await s.del(`/v1/videos/${b.id}`).expect(204);
  await s.temporal.workflow.getHandle(`video-${failed.uuid}`).result();
  fs.rmSync(garbage);
  await save(s, 'invalid-media-retry-delete', failed.uuid);

  // 3. No upload → upload_expired, then delete.
  const c = await s.post('/v1/upload/init', { filename: 'never.mp4', size: 100, content_type: 'video/mp4' }).expect(201);
  const expired = await waitForVideo(s, c.body.video_id, isStatus('failed'), 30_000);
  await s.del(`/v1/videos/${c.body.video_id}`).expect(204);
  await s.temporal.workflow.getHandle(`video-${expired.uuid}`).result();
  await save(s, 'upload-expired-delete', expired.uuid);

}

runMain(main);
