import assert from 'node:assert/strict';
import { STARTUP_BUCKETS_MS, type HourRow } from '../../lib/analytics/aggregate';
import { breakdownsOf, percentileFromHist, retentionOf, seriesOf, totalsOf } from '../../lib/analytics/math';

const row = (over: Partial<HourRow>): HourRow => ({
  hour: new Date('2026-11-25T10:00:00Z'), subject_id: 's', workspace_id: 'w', views: 0, new_viewers: 0, watch_ms: 0, started: 0, startup_ms_sum: 0,
  startup_hist: {}, rebuffers: 0, rebuffer_ms: 0, errors: 0, exits_before_start: 0, bitrate_sum: 0, bitrate_views: 0, retention_hist: null,
  startup_failures: 0, playback_failures: 0, score_sum: 0, scored_views: 0, bitrate_ms_sum: 0, bitrate_ms: 0, upscale_ms_sum: 0, downscale_ms_sum: 0, scale_ms: 0,
  upscaled_ms: 0, downscaled_ms: 0, scale_time_ms: 0, ...over,
});

describe('analytics aggregation math', () => {
  it('interpolates percentiles inside histogram buckets', () => {
    // Bucket i (width_bucket) covers [bounds[i-1], bounds[i]).
    const i1000 = STARTUP_BUCKETS_MS.indexOf(1000) + 1; // [1000, 1250)
    assert.equal(percentileFromHist({}, 0.5), null);
    assert.equal(percentileFromHist({ [i1000]: 4 }, 0.5), 1125);
    assert.equal(percentileFromHist({ 0: 50, [i1000]: 50 }, 0.5), 50);
    assert.equal(percentileFromHist({ 0: 50, [i1000]: 50 }, 0.95), 1225);
    assert.equal(percentileFromHist({ [STARTUP_BUCKETS_MS.length]: 1 }, 1), 90000, 'the open last bucket ends at 1.5× its bound');
  });

  it('keeps upscaling and downscaling shares of time within 0–100 %, the amounts apart (issue 49: "Upscaling 220.0 %")', () => {
    // 240p shown 768 pixels high (2.2× upscaled) for 10 s of 12 s; 1080p shown at 540 for 2 s.
    const t = totalsOf([
      row({ scale_ms: 12_000, upscale_ms_sum: 2.2 * 10_000, downscale_ms_sum: 0.5 * 2000, scale_time_ms: 12_000, upscaled_ms: 10_000, downscaled_ms: 2000 }),
      row({ scale_ms: 0, scale_time_ms: 0 }),
    ]);
    assert.equal(t.upscale_percentage, 83.33);
    assert.equal(t.downscale_percentage, 16.67);
    assert.equal(t.upscale_amount_percentage, 183.33);
    assert.equal(t.downscale_amount_percentage, 8.33);
    // Hours rolled up before the shares existed (scale_time_ms 0) weigh in neither side; figures that
    // disagree never leave the range.
    const odd = totalsOf([row({ scale_ms: 5000, upscale_ms_sum: 50_000, scale_time_ms: 1000, upscaled_ms: 3000, downscaled_ms: 0 }), row({ scale_ms: 9000, upscale_ms_sum: 900 })]);
    assert.equal(odd.upscale_percentage, 100);
    assert.equal(odd.downscale_percentage, 0);
    assert.equal(totalsOf([row({})]).upscale_percentage, null);
  });

  it('adds hours up: rebuffer % over watch + stall time, error rate, average bitrate', () => {
    const t = totalsOf([
      row({ views: 3, new_viewers: 2, watch_ms: 9000, started: 3, rebuffers: 1, rebuffer_ms: 1000, errors: 1, bitrate_sum: 900000, bitrate_views: 2, startup_hist: { 5: 3 } }),
      row({ views: 1, new_viewers: 1, watch_ms: 0, exits_before_start: 1, startup_hist: { 5: 1 } }),
    ]);
    assert.equal(t.views, 4);
    assert.equal(t.unique_viewers, 3);
    assert.equal(t.watch_time_seconds, 9);
    assert.equal(t.average_view_seconds, 2.25);
    assert.equal(t.rebuffer_percentage, 10);
    assert.equal(t.error_rate, 0.25);
    assert.equal(t.exits_before_start, 1);
    assert.equal(t.average_bitrate, 450000);
    assert.equal(t.startup_time_p50_ms, 275);
  });

  it('fills every bucket of a series, by hour or by UTC day', () => {
    const rows = [row({ hour: new Date('2026-11-25T10:00:00Z'), views: 2 }), row({ hour: new Date('2026-11-25T12:00:00Z'), views: 1 })];
    const hours = seriesOf(rows, new Date('2026-11-25T09:00:00Z'), new Date('2026-11-25T13:00:00Z'), 'hour');
    assert.deepEqual(hours.map((p) => p.views), [0, 2, 0, 1]);
    const days = seriesOf(rows, new Date('2026-11-24T09:00:00Z'), new Date('2026-11-26T00:00:00Z'), 'day');
    assert.deepEqual(days.map((p) => [p.t, p.views]), [['2026-11-24T00:00:00.000Z', 0], ['2026-11-25T00:00:00.000Z', 3]]);
  });

  it('turns furthest-position histograms into a retention curve', () => {
    const r = retentionOf([row({ retention_hist: { 0: 1, 50: 2 } }), row({ retention_hist: { 100: 1 } })], 10);
    assert.equal(r.length, 101);
    assert.deepEqual([r[0], r[1], r[50], r[51], r[100]], [
      { second: 0, viewers: 4 }, { second: 0.1, viewers: 3 }, { second: 5, viewers: 3 }, { second: 5.1, viewers: 1 }, { second: 10, viewers: 1 },
    ]);
    assert.deepEqual(retentionOf([], null), []);
  });

  it('sums breakdowns per value, most viewed first', () => {
    const h = new Date();
    const b = breakdownsOf([
      { hour: h, subject_id: 's', dimension: 'browser', value: 'Firefox', views: 1, watch_ms: 1000 },
      { hour: h, subject_id: 's', dimension: 'browser', value: 'Chrome', views: 2, watch_ms: 500 },
      { hour: h, subject_id: 's', dimension: 'browser', value: 'Firefox', views: 2, watch_ms: 1000 },
    ]);
    assert.deepEqual(b.browser, [{ value: 'Firefox', views: 3, watch_time_seconds: 2 }, { value: 'Chrome', views: 2, watch_time_seconds: 0.5 }]);
    assert.deepEqual(b.os, []);
  });

  it('adds the experience figures up across hours (scores averaged per view, bitrate and scaling weighted by time)', () => {
    const t = totalsOf([
      row({ views: 2, watch_ms: 60_000, rebuffers: 1, score_sum: 180, scored_views: 2, startup_failures: 1, bitrate_ms_sum: 1e6 * 30_000, bitrate_ms: 30_000, upscale_ms_sum: 0.5 * 30_000, scale_ms: 30_000, upscaled_ms: 30_000, scale_time_ms: 30_000 }),
      row({ views: 2, watch_ms: 60_000, rebuffers: 3, score_sum: 50, scored_views: 1, playback_failures: 1, bitrate_ms_sum: 3e6 * 10_000, bitrate_ms: 10_000, downscale_ms_sum: 0.25 * 10_000, scale_ms: 10_000, downscaled_ms: 10_000, scale_time_ms: 10_000 }),
    ]);
    assert.equal(t.viewer_experience_score, 76.7, 'mean of three views: (180 + 50) / 3');
    assert.equal(t.startup_failures, 1);
    assert.equal(t.playback_failures, 1);
    assert.equal(t.rebuffer_frequency_per_minute, 2, '4 stalls in 2 minutes');
    assert.equal(t.time_weighted_bitrate_kbps, 1500, '1 Mb/s for 30 s and 3 Mb/s for 10 s');
    // The amounts, weighted by time; the shares of time: upscaled 30 of 40 s, downscaled 10.
    assert.equal(t.upscale_amount_percentage, 37.5);
    assert.equal(t.downscale_amount_percentage, 6.25);
    assert.equal(t.upscale_percentage, 75);
    assert.equal(t.downscale_percentage, 25);
    const empty = totalsOf([]);
    assert.equal(empty.viewer_experience_score, null);
    assert.equal(empty.time_weighted_bitrate_kbps, null);
    assert.equal(empty.upscale_percentage, null);
  });
});
