/**
 * Records the media room's histories (issue 9) into test/fixtures/histories/, prefixed `media-`:
 * a hostile playlist refused as invalid_media, and a dimension bomb failed as media_too_large,
 * each then deleted. `npx tsx test/replay/record-media.ts` with the services ./scripts/test provisions.
 */
import fs from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { isStatus, uploadFormA, waitForVideo } from '../support/flow';
import { corpusDir, dimensionBomb, hlsPlaylist } from '../support/hostile';
import { startStack } from '../support/stack';
import { runMain } from '../support/main';

const outDir = path.join(__dirname, '..', 'fixtures', 'histories');

async function main(): Promise<void> {
  const s = await startStack();
  const dir = corpusDir();
  const files: Array<[string, string]> = [
    ['media-hostile-playlist-delete', hlsPlaylist(dir, 'evil.mp4', '/etc/hostname')],
    ['media-too-large-delete', await dimensionBomb(dir)],
  ];
  for (const [name, file] of files) {
    const up = await uploadFormA(s, file);
    const failed = await waitForVideo(s, up.id, isStatus('failed'));
    await s.del(`/v1/videos/${up.id}`).expect(204);
    const handle = s.temporal.workflow.getHandle(`video-${failed.uuid}`);
    await handle.result();
    const history = await handle.fetchHistory();
    fs.writeFileSync(path.join(outDir, `${name}.json`), historyToJSON(history));
    console.log(`recorded ${name} (${failed.error_code}): ${history.events?.length} events`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

runMain(main);
