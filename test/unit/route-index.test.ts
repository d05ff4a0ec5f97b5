import assert from 'node:assert/strict';
import Router from '@koa/router';
import { indexByFirstSegment } from '../../api/routeIndex';

/** A router shaped like the API's: literal first segments, parameters, a catch-all, a RegExp, middleware. */
function sample(): Router {
  const r = new Router();
  const h = () => undefined;
  r.get('/healthz', h);
  r.get('/videos', h);
  r.get('/videos/:id', h);
  r.patch('/videos/:id', h);
  r.post('/videos/:id/retry', h);
  r.get('/cdn/v/*rest', h);
  r.get('/cdn/v/*rest', h);
  r.options('/cdn/live/*rest', h);
  r.get('/openapi.json', h);
  r.get('/:anything/deep', h);
  r.get(/^\/dashboard(?:\/(?!session(?:\/|$)).*)?$/, h);
  r.use('/videos', h);
  return r;
}

const layers = (m: ReturnType<Router['match']>) => ({ path: m.path.map((l) => String(l.path)), pathAndMethod: m.pathAndMethod.map((l) => String(l.path)), route: m.route });

describe('api/routeIndex: a router that tests only the layers of the first path segment', () => {
  const paths = [
    '/healthz', '/healthz/', '/HEALTHZ', '/videos', '/videos/', '/Videos/vid_1', '/videos/vid_1', '/videos/vid_1/retry', '/videos/vid_1/retry/x',
    '/cdn/v/vid_1/master.m3u8', '/cdn/live/x/y', '/cdn', '/openapi.json', '/openapijson', '/x/deep', '/videos/deep', '/dashboard', '/dashboard/videos',
    '/dashboard/session', '/', '', '//videos', '/vid%65os/1', '/nothing/here',
  ];
  it('matches exactly what @koa/router matches, for every method, in the same order', () => {
    const plain = sample();
    const indexed = indexByFirstSegment(sample());
    for (const p of paths) {
      for (const m of ['GET', 'HEAD', 'POST', 'PATCH', 'OPTIONS', 'delete']) {
        assert.deepEqual(layers(indexed.match(p, m)), layers(plain.match(p, m)), `${m} ${p}`);
      }
    }
  });

  it('indexes routes registered after it was made', () => {
    const r = indexByFirstSegment(sample());
    assert.equal(r.match('/late/1', 'GET').route, false);
    r.get('/late/:id', () => undefined);
    assert.equal(r.match('/late/1', 'GET').route, true);
  });
});
