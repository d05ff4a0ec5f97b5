import { AsyncLocalStorage } from 'node:async_hooks';
import { Server } from '@tus/server';
import { Upload, type DataStore } from '@tus/utils';
import { loadVideoRow } from '../../lib/videos/read';
import type { Deps } from '../deps';
import { completeUpload } from '../upload/complete';
import { parseTusUrlToken, tusUrl } from './ids';
import { createTusStore } from './store';

export interface Tus {
  server: Server;
  store: DataStore;
}

/** The id a POST /upload/tus creates: chosen by the route (it is the video's staging key). */
export const creatingUpload = new AsyncLocalStorage<{ uploadId: string }>();

const instances = new WeakMap<Deps, Tus>();

/** One tus server per app (the stores hold no state of their own beyond storage). */
export function tusFor(deps: Deps): Tus {
  let tus = instances.get(deps);
  if (!tus) {
    tus = createTus(deps);
    instances.set(deps, tus);
  }
  return tus;
}

function createTus(deps: Deps): Tus {
  const { config, log } = deps;
  const store = createTusStore(config);
  const server = new Server({
    path: '/upload/tus',
    datastore: store,
    maxSize: config.upload.maxResumableBytes,
    generateUrl: (_req, { id }) => tusUrl(config.publicBaseUrl, id),
    getFileIdFromRequest: (_req, lastPath) => parseTusUrlToken(lastPath ?? '')?.uploadId,
    namingFunction: () => {
      const c = creatingUpload.getStore();
      if (!c) throw { status_code: 403, body: 'Uploads are created through POST /upload/tus with an API key\n' };
      return c.uploadId;
    },
    // A finished upload belongs to its video now; only DELETE /videos/{id} removes it.
    disableTerminationForFinishedUploads: true,
    onUploadFinish: async (_req, upload) => {
      await finishTusUpload(deps, upload.id);
      return {};
    },
  });
  // The id ends in the upload URL's nonce (a capability, ids.ts): log the video, never the id.
  server.on('POST_TERMINATE', (_req: unknown, _res: unknown, id: string) => log.info({ videoId: id.split('/')[2] }, 'tus upload terminated'));
  return { server, store };
}

/**
 * The last byte completes the upload (SPEC §13) through the same update as POST /upload/complete.
 * If this fails (Temporal briefly down, the process killed right now), the recovery pass
 * (`recover.ts`) completes it later: a finished upload is in storage, and that is what it looks for.
 */
export async function finishTusUpload(deps: Deps, uploadId: string): Promise<void> {
  const videoId = uploadId.split('/')[2];
  try {
    const row = await loadVideoRow(deps.db, videoId);
    if (!row || row.upload_key !== uploadId) return;
    await completeUpload(deps, row);
  } catch (err) {
    deps.log.warn({ err, videoId }, 'tus upload finished but not completed yet; the recovery pass will complete it');
  }
}

/** Creates the tus upload of a video made by init/presigned with `upload_protocol: "tus"`. */
export async function createTusUpload(deps: Deps, uploadId: string, size: number, meta: { filename: string; contentType: string }): Promise<string> {
  const upload = new Upload({ id: uploadId, size, offset: 0, creation_date: new Date().toISOString(), metadata: { filename: meta.filename, filetype: meta.contentType, contentType: meta.contentType } });
  await tusFor(deps).store.create(upload);
  return tusUrl(deps.config.publicBaseUrl, uploadId);
}
