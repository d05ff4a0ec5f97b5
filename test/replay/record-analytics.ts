/**
 * Records the analytics rollup's history (test/fixtures/histories/analytics-rollup.json) for the
 * replay test. Never touches the other fixtures. `npx tsx test/replay/record-analytics.ts` (needs
 * the services that ./scripts/test provisions).
 */
import fs from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { mochaHooks } from '../support/hooks';
import { startStack } from '../support/stack';

async function main(): Promise<void> {
  const s = await startStack({ workers: ['workflow'] });
  const workflowId = `analytics-rollup-record-${Date.now()}`;
  const handle = await s.temporal.workflow.start('analyticsRollupWorkflow', { taskQueue: s.config.temporal.taskQueue, workflowId, args: [] });
  await handle.result();
  const history = await handle.fetchHistory();
  fs.writeFileSync(path.join(__dirname, '..', 'fixtures', 'histories', 'analytics-rollup.json'), historyToJSON(history));
  console.log(`recorded analytics-rollup: ${history.events?.length} events`);
  await s.close();
  await mochaHooks.afterAll.call({ timeout() {} } as never);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
