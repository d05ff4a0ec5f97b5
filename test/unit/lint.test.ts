import assert from 'node:assert/strict';
import path from 'node:path';
import { ESLint } from 'eslint';

const root = path.resolve(__dirname, '..', '..');

describe('lint rules', function () {
  this.timeout(60_000);
  const eslint = new ESLint({ cwd: root });

  it('the code base passes (workflows deterministic, env read only in lib/config/index.ts)', async () => {
    const results = await eslint.lintFiles(['api', 'lib', 'workflows', 'activities', 'workers', 'bin', 'migrations']);
    const problems = results.flatMap((r) => r.messages.map((m) => `${path.relative(root, r.filePath)}:${m.line} ${m.message}`));
    assert.deepEqual(problems, []);
  });

  it('catches a Node built-in, the db and a client in workflow code, but allows type imports', async () => {
    const bad = await eslint.lintText(
      ["import fs from 'node:fs';", "import { createDb } from '../lib/db';", "import { Client } from '@temporalio/client';", 'export const x = [fs, createDb, Client, process.env.X];'].join('\n'),
      { filePath: path.join(root, 'workflows', 'bad.ts') },
    );
    assert.equal(bad[0].messages.length, 5, JSON.stringify(bad[0].messages.map((m) => m.message)));
    const ok = await eslint.lintText("import type { Db } from '../lib/db';\nexport type X = Db;", { filePath: path.join(root, 'workflows', 'ok.ts') });
    assert.deepEqual(ok[0].messages, []);
  });

  it('catches a value import of an activity in a room (activities/<pillar>/<file>) from workflow code', async () => {
    const file = path.join(root, 'workflows', 'video', 'pipeline', 'bad.ts');
    const bad = await eslint.lintText("import { ladderActivities } from '../../../activities/transcode/ladder';\nexport const x = ladderActivities;", { filePath: file });
    assert.equal(bad[0].messages.length, 1, JSON.stringify(bad[0].messages.map((m) => m.message)));
    const ok = await eslint.lintText("import type { Activities } from '../../../activities';\nexport type X = Activities;", { filePath: file });
    assert.deepEqual(ok[0].messages, []);
  });

  it('catches process.env outside lib/config/index.ts', async () => {
    const r = await eslint.lintText('export const port = process.env.PORT;', { filePath: path.join(root, 'api', 'x.ts') });
    assert.equal(r[0].messages.length, 1);
  });
});
