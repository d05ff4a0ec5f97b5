import { z } from 'zod';
import { type DocContext, operation } from '../openapi/operation';
import { analyticsQuery, beaconDocBody, liveStreamAnalytics, videoAnalytics, workspaceAnalytics } from './schema';

export function analyticsDocs(d: DocContext): void {
  const tag = 'Analytics';
  operation(d, {
    method: 'post', path: '/beacons', operationId: 'sendBeacons', tag, auth: false,
    summary: 'Player events (no key; CORS *; JSON or text/plain for sendBeacon; ≤ 16 KB, ≤ 100 events)',
    description:
      'A body without Content-Type application/json or text/plain is 415 `unsupported_content_type`. Only subjects the caller could play are counted; anything else is dropped silently. Duplicate (view_id, seq) count once. ' +
      'Each client address may send ANALYTICS_BEACONS_PER_MINUTE requests a minute (default 1200); past it, 429 `beacon_rate_limited` with Retry-After.',
    rawBody: { 'application/json': beaconDocBody, 'text/plain': beaconDocBody },
    responses: { 204: { description: 'Accepted (or not countable)' } },
    errors: [400, 413, 415, 429],
  });
  operation(d, {
    method: 'options', path: '/beacons', operationId: 'beaconsPreflight', tag, auth: false, summary: 'CORS preflight',
    responses: { 204: { description: 'CORS headers' } },
  });
  operation(d, {
    method: 'get', path: '/videos/{id}/analytics', operationId: 'getVideoAnalytics', tag,
    summary: 'A video\'s views, watch time, startup, rebuffering, retention and breakdowns (`invalid_range` for a bad range)',
    params: z.object({ id: z.string().meta({ example: 'vid_…' }) }), query: analyticsQuery,
    responses: { 200: videoAnalytics }, errors: [400],
  });
  operation(d, {
    method: 'get', path: '/live-streams/{id}/analytics', operationId: 'getLiveStreamAnalytics', tag,
    summary: 'A live stream\'s concurrent viewers now, and its views, watch time, startup, rebuffering and breakdowns over the range',
    params: z.object({ id: z.string().meta({ example: 'ls_…' }) }), query: analyticsQuery,
    responses: { 200: liveStreamAnalytics }, errors: [400],
  });
  operation(d, {
    method: 'get', path: '/analytics', operationId: 'getWorkspaceAnalytics', tag,
    summary: 'The workspace\'s totals, series, breakdowns and top videos', query: analyticsQuery,
    responses: { 200: workspaceAnalytics }, errors: [400],
  });
  operation(d, {
    method: 'get', path: '/sdk/analytics.js', operationId: 'getAnalyticsSdk', tag, auth: false,
    summary: 'The analytics sender for hls.js, video.js and Shaka Player pages',
    responses: {
      200: { description: 'JavaScript', content: { 'application/javascript': { schema: z.string() } } },
      304: { description: 'Not modified' },
    },
  });
}
