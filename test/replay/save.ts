import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';

const outDir = path.join(__dirname, '..', 'fixtures', 'histories');

/**
 * Saves every run of a workflow (continue-as-new chain), oldest first, as `<name>.json`,
 * `<name>-idle.json`, `<name>-idle2.json`…, keeping any fixture that already exists: recorded
 * histories stand for workflows already running and are never re-recorded.
 */
export async function saveWorkflowRuns(temporal: Client, name: string, workflowId: string): Promise<void> {
  const runs: string[] = [];
  let runId: string | undefined = (await temporal.workflow.getHandle(workflowId).describe()).runId;
  while (runId) {
    runs.unshift(runId);
    const history = await temporal.workflow.getHandle(workflowId, runId).fetchHistory();
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  for (const [i, id] of runs.entries()) {
    const file = path.join(outDir, `${name}${i === 0 ? '' : i === 1 ? '-idle' : `-idle${i}`}.json`);
    if (fs.existsSync(file)) {
      console.log(`kept ${path.basename(file)} (fixtures are never re-recorded)`);
      continue;
    }
    const history = await temporal.workflow.getHandle(workflowId, id).fetchHistory();
    fs.writeFileSync(file, historyToJSON(history));
    console.log(`recorded ${path.basename(file)}: ${history.events?.length} events`);
  }
}
