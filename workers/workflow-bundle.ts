import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';

/**
 * The workflow code a worker runs, bundled by webpack: ~3 s of CPU, most of a workflow worker's
 * start. Built once into a file (`node dist/workers/workflow-bundle.js <file>`, or writeWorkflowBundle)
 * and named by WORKFLOW_BUNDLE_PATH, every worker started after reuses it: scripts/start builds it
 * at each start for its worker's restarts, scripts/test for every worker and shard of a run.
 */
export const workflowsPath = require.resolve('../workflows');

// webpack's progress and stats would otherwise fill the terminal at every bundle.
const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never;

/** A fresh bundle of `workflowsPath` (the source map is inline in `code`, which is all Temporal reads). */
export async function bundleWorkflows(): Promise<WorkflowBundle> {
  const { code } = await bundleWorkflowCode({ workflowsPath, logger: quiet });
  return { code };
}

/** Bundles the workflows into `file`, atomically (a worker starting meanwhile reads the old file or the new, never half of one). */
export async function writeWorkflowBundle(file: string): Promise<void> {
  const { code } = await bundleWorkflows();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, code);
  fs.renameSync(tmp, file);
}

/** What bundleWorkflowCode writes last; Temporal parses it back, so a file without it is no bundle. */
const SOURCE_MAP = '//# sourceMappingURL=data:';

/**
 * The workflow bundle a worker runs: the prebuilt one at `file` when it names a readable bundle,
 * else (unset) a fresh one. A named file that is missing, unreadable or not a bundle costs the
 * start its 3 s, never the start itself: `warn` says why and the workflows are bundled here.
 */
export async function loadWorkflowBundle(
  file: string | undefined,
  opts: { warn: (msg: string) => void; bundle?: () => Promise<WorkflowBundle> },
): Promise<{ bundle: WorkflowBundle; prebuilt: boolean }> {
  const bundle = opts.bundle ?? bundleWorkflows;
  if (!file) return { bundle: await bundle(), prebuilt: false };
  let code: string;
  try {
    code = await fs.promises.readFile(file, 'utf8');
  } catch (err) {
    opts.warn(`WORKFLOW_BUNDLE_PATH=${file} is unreadable (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); bundling the workflows instead`);
    return { bundle: await bundle(), prebuilt: false };
  }
  if (!code.includes(SOURCE_MAP)) {
    opts.warn(`WORKFLOW_BUNDLE_PATH=${file} is not a workflow bundle (no inline source map); bundling the workflows instead`);
    return { bundle: await bundle(), prebuilt: false };
  }
  return { bundle: { code }, prebuilt: true };
}

// `node dist/workers/workflow-bundle.js <file>` (or through tsx): write the bundle for WORKFLOW_BUNDLE_PATH.
if (require.main === module) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: workflow-bundle <file>');
    process.exit(2);
  }
  writeWorkflowBundle(path.resolve(file)).then(
    () => process.exit(0),
    (err: Error) => {
      console.error(err.stack ?? err.message);
      process.exit(1);
    },
  );
}
