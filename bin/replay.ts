import path from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, makeTelemetryFilterString, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { loadConfig } from '../lib/config';
import { parseVideoId } from '../lib/ids';
import { createTemporalClient } from '../lib/temporal';
import { videoWorkflowId } from '../workflows/video/defs';
import { workflowsPath } from '../workers/workflow-bundle';

const USAGE = `usage: npm run replay -- <vid_… | video uuid | workflow id>… [--workflows <file>]

Fetches each workflow's history from Temporal (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE) and replays
it on the workflow code of this checkout (or --workflows <file>), bundled once for all of them.
Exit 0: every one replays; exit 1: one does not (nondeterminism or another failure), with the reason.`;

function parseArgs(argv: string[]): { ids: string[]; workflows: string } {
  let workflows = workflowsPath;
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--workflows') workflows = path.resolve(argv[++i] ?? '');
    else if (argv[i] === '-h' || argv[i] === '--help') throw new Error(USAGE);
    else rest.push(argv[i]);
  }
  if (rest.length === 0) throw new Error(USAGE);
  return { ids: rest, workflows };
}

/** A video id in either form means its entity workflow; anything else is a workflow id. */
export function workflowIdFor(id: string): string {
  const uuid = parseVideoId(id);
  return uuid ? videoWorkflowId(uuid) : id;
}

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;

/**
 * Every run of the workflow, oldest first. A video continues-as-new into an idle run once it is
 * processed, so the latest run alone would not exercise the pipeline code a change touches;
 * each run's first event names the run it continued from.
 */
async function allRuns(client: Client, workflowId: string): Promise<History[]> {
  const runs: History[] = [];
  let runId: string | undefined;
  for (;;) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    runs.unshift(history);
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
    if (!runId) return runs;
  }
}

async function main(): Promise<number> {
  let args: { ids: string[]; workflows: string };
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    console.error((err as Error).message);
    return 1;
  }
  // Core would print the nondeterminism as a WARN as well; this tool reports it once, below.
  Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} } } });
  const config = loadConfig();
  const client = createTemporalClient(config);
  const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never;
  // Bundling is most of a replay's time: once, whatever the number of workflows.
  let bundle: ReturnType<typeof bundleWorkflowCode> | undefined;
  let code = 0;
  try {
    for (const workflowId of args.ids.map(workflowIdFor)) {
      try {
        const runs = await allRuns(client, workflowId);
        const workflowBundle = await (bundle ??= bundleWorkflowCode({ workflowsPath: args.workflows, logger: quiet }));
        for (const history of runs) await Worker.runReplayHistory({ workflowBundle }, history, workflowId);
        const events = runs.reduce((n, h) => n + (h.events?.length ?? 0), 0);
        console.log(`ok: ${workflowId} replays on ${path.relative(process.cwd(), args.workflows) || args.workflows} (${runs.length} run(s), ${events} events)`);
      } catch (err) {
        if (err instanceof DeterminismViolationError) {
          console.error(`NONDETERMINISM: ${workflowId} does not replay on this code:\n  ${err.message}`);
        } else {
          console.error(`FAILED: ${workflowId}: ${(err as Error).message}`);
        }
        code = 1;
      }
    }
    return code;
  } finally {
    await client.connection.close().catch(() => undefined);
  }
}

main().then(
  (code) => (process.exitCode = code),
  (err) => {
    console.error(err);
    process.exitCode = 1;
  },
);
