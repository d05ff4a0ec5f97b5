/**
 * Load under the fault suite's stack (test/faults): N concurrent small uploads, from init to every
 * rendition ready, through 2 API processes and 2 workers, then the same batch through 1 API and 1
 * worker on the same Temporal and Postgres. Prints both batch times and their ratio, and checks the
 * end state of every video (one video.uploaded and one video.ready each, no 5xx).
 *   npm run bench:faults -- --uploads 100
 * The longer fault soak is the fault suite with its slow variants on:
 *   FAULTS_FULL=1 ./scripts/test 'test/faults/*.test.ts'
 */
import os from 'node:os';
import { duplicateEvents } from '../test/faults/flow';
import { runLoad } from '../test/faults/load';
import { startFaultStack } from '../test/faults/stack';
import { makeClip } from '../test/support/media';
import { runMain } from '../test/support/main';
import { arg } from './args';


const uploads = arg('uploads', 100);

async function batch(apis: number, workers: number, clip: string) {
  const s = await startFaultStack({ apis, workers });
  // Let the workers bundle and poll before the clock starts.
  await new Promise((r) => setTimeout(r, 20_000));
  process.stdout.write(`${uploads} uploads through ${apis} API + ${workers} worker processes... `);
  const r = await runLoad(s, clip, uploads, 3_600_000);
  const dup = await duplicateEvents(s);
  console.log(`${r.seconds.toFixed(1)} s, ${r.fiveXX} 5xx other than 503, ${r.unavailable} 503s (retried as Retry-After says), ${dup} duplicate events`);
  await s.close();
  if (r.fiveXX || dup) throw new Error('the load run saw a 500-class error other than 503, or duplicate events');
  return r.seconds;
}

async function main(): Promise<void> {
  const clip = await makeClip({ width: 320, height: 180, seconds: 1 });
  const two = await batch(2, 2, clip);
  const one = await batch(1, 1, clip);
  console.log('');
  console.log(`${uploads} concurrent 1 s 320x180 uploads, ${os.availableParallelism()} cores (shared machine: read ratios, not seconds)`);
  console.log(`  2 APIs + 2 workers   ${two.toFixed(1)} s   ${(two / one).toFixed(2)}x`);
  console.log(`  1 API  + 1 worker    ${one.toFixed(1)} s   1.00x`);
}

runMain(main);
