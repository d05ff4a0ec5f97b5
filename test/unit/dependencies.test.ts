import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import depcheck from 'depcheck';

const root = path.resolve(__dirname, '..', '..');

/**
 * Every declared dependency is used and every imported package is declared (depcheck, with the
 * documented exceptions in .depcheckrc.json: protobufjs must be a direct dependency for
 * replaying JSON histories though nothing imports it by name, autocannon is required from
 * the script bench/api.ts hands to a child process, and @vidhost/client is this repository's
 * own package in packages/client, reached through tsconfig `paths` rather than installed, whose
 * one dependency, openapi-fetch, the root therefore provides: depcheck does not look into a
 * folder with its own package.json).
 */
describe('dependencies', function () {
  this.timeout(120_000);

  it('declares nothing unused and uses nothing undeclared', async () => {
    const rc = JSON.parse(fs.readFileSync(path.join(root, '.depcheckrc.json'), 'utf8'));
    const r = await depcheck(root, { ignoreMatches: rc.ignores, ignorePatterns: rc['ignore-patterns'] });
    assert.deepEqual({ unused: r.dependencies, unusedDev: r.devDependencies, missing: Object.keys(r.missing) }, { unused: [], unusedDev: [], missing: [] });
  });
});
