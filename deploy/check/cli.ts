import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { lintChart, renderChart, SCENARIOS } from './chart';
import { validateObjects } from './validate';

/** `npm run chart:check`: helm lint + helm template for every scenario, each object schema-validated. */
async function main(): Promise<void> {
  const cached = path.join(os.homedir(), '.cache', 'vidhost', 'tools', 'bin', 'helm');
  const helm = process.env.HELM_PATH ?? (fs.existsSync(cached) ? cached : 'helm');
  let failed = 0;
  for (const [name, set] of Object.entries(SCENARIOS)) {
    await lintChart(helm, set);
    const objects = await renderChart(helm, set);
    const problems = await validateObjects(objects);
    failed += problems.length;
    console.log(`${problems.length ? 'FAIL' : 'ok  '} ${name}: ${objects.length} objects${problems.map((p) => `\n     ${p}`).join('')}`);
  }
  process.exitCode = failed ? 1 : 0;
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
