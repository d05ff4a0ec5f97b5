import fs from 'node:fs';
import path from 'node:path';
import { generateClientTypes } from '../api/openapi/client';

/** Writes packages/client/src/schema.ts (@vidhost/client) (the typed client's paths) from the current OpenAPI document. */
async function main(): Promise<void> {
  const out = path.join(__dirname, '..', 'packages', 'client', 'src', 'schema.ts');
  fs.writeFileSync(out, await generateClientTypes());
  console.log(`wrote ${path.relative(process.cwd(), out)}`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
