import assert from 'node:assert/strict';
import { createWatermarkQuery } from '../../api/watermarks/schema';
import { placementProblem } from '../../dashboard/src/placement';

/**
 * The dashboard's watermark form says what the API would refuse before it sends the image: its
 * check (dashboard/src/placement.ts) takes exactly the placements the API's query schema takes.
 */
describe('dashboard watermark form: the API’s placement bounds', () => {
  const ok = { position: 'bottom-right', padding: '0.05', scale: '0.15', opacity: '1' };
  const cases: Array<Partial<typeof ok>> = [
    {},
    { position: 'top-left' },
    { position: 'center', padding: '0', scale: '0', opacity: '0' },
    { padding: '0.5', scale: '1' },
    { position: 'middle' },
    { position: '' },
    { padding: '0.51' },
    { padding: '-0.1' },
    { scale: '1.01' },
    { scale: '1e-2' },
    { opacity: 'NaN' },
    { opacity: 'Infinity' },
    { opacity: '' },
    { opacity: '.5' },
    { opacity: '0.75' },
  ];
  for (const c of cases) {
    it(`agrees on ${JSON.stringify(c)}`, () => {
      const f = { ...ok, ...c };
      const api = createWatermarkQuery.safeParse(f).success;
      assert.equal(placementProblem(f) === null, api, `form says ${placementProblem(f)}, API ${api ? 'takes' : 'refuses'} it`);
    });
  }
});
