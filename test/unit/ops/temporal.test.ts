import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ProvisionError } from '../../../ops/log';
import { run } from '../../../ops/proc';
import { Supervisor } from '../../../ops/supervisor';
import { checkTemporal, devServer, devServerArgs, devServerFairness, devServerPartitions, planTemporal, temporalHealthy } from '../../../ops/temporal';
import { freePort } from '../../support/services';

describe('ops/temporal', () => {
  it('a user-supplied TEMPORAL_ADDRESS is used as is, never a dev server; without one, a dev server unless the port already serves', async () => {
    const open = (ports: number[]) => async (p: number) => ports.includes(p);
    assert.deepEqual(await planTemporal({ TEMPORAL_ADDRESS: 'temporal.internal:7233', TEMPORAL_PORT: '7300' }, open([])), { kind: 'external', address: 'temporal.internal:7233' });
    assert.deepEqual(await planTemporal({ TEMPORAL_PORT: '7300', TEMPORAL_UI_PORT: '8300' }, open([])), { kind: 'dev', address: '127.0.0.1:7300', uiUrl: 'http://localhost:8300', port: 7300, uiPort: 8300 });
    assert.equal((await planTemporal({ TEMPORAL_PORT: '7300' }, open([7300]))).kind, 'reuse');
    await assert.rejects(planTemporal({ TEMPORAL_PORT: '7300', TEMPORAL_UI_PORT: '8300' }, open([8300])), /port 8300 \(Temporal UI\) is in use/);
  });

  it('the dev server keeps its workflows in <data>/temporal.sqlite with our search attributes', () => {
    const args = devServerArgs({ port: 7300, uiPort: 8300 }, '/srv/data');
    assert.deepEqual(args.slice(0, 4), ['server', 'start-dev', '--db-filename', '/srv/data/temporal.sqlite']);
    for (const sa of ['VideoId=Keyword', 'WorkspaceId=Keyword', 'VideoStatus=Keyword']) assert.ok(args.includes(sa), sa);
    // One task-queue partition: a machine's few pollers take a task without forwarding between four.
    for (const v of ['matching.numTaskqueueReadPartitions=1', 'matching.numTaskqueueWritePartitions=1']) assert.equal(args[args.indexOf(v) - 1], '--dynamic-config-value', v);
    // SPEC §25: Task Queue Priority and Fairness (the matcher that honours priority keys and fairness keys).
    assert.equal(args[args.indexOf('matching.enableFairness=true') - 1], '--dynamic-config-value');
  });

  it('runs fairness on a new SQLite file only; an older one keeps its backlog table with priority alone', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-fairness-'));
    try {
      assert.equal(devServerFairness(dir), true, 'a new data dir');
      fs.writeFileSync(path.join(dir, 'temporal.sqlite'), '');
      assert.equal(devServerFairness(dir), false, 'a SQLite file made before fair share');
      const args = devServerArgs({ port: 7300, uiPort: 8300 }, dir);
      assert.ok(!args.includes('matching.enableFairness=true'));
      assert.equal(args[args.indexOf('matching.useNewMatcher=true') - 1], '--dynamic-config-value');
      fs.writeFileSync(path.join(dir, 'temporal.fairness'), '1\n');
      assert.equal(devServerFairness(dir), true, 'a SQLite file the marker says started with fairness');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps the dev server's four partitions for a SQLite file an earlier version made (its tasks may sit in any of them)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-partitions-'));
    try {
      assert.equal(devServerPartitions(dir), 1, 'a new data dir');
      fs.writeFileSync(path.join(dir, 'temporal.sqlite'), '');
      assert.equal(devServerPartitions(dir), 4, 'a SQLite file without the marker');
      assert.ok(!devServerArgs({ port: 7300, uiPort: 8300 }, dir).includes('matching.numTaskqueueReadPartitions=1'));
      fs.writeFileSync(path.join(dir, 'temporal.partitions'), '1\n');
      assert.equal(devServerPartitions(dir), 1, 'a SQLite file the marker says started with one');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('with the Temporal CLI', function () {
    this.timeout(120_000);
    const cli = process.env.TEMPORAL_CLI_PATH;
    before(function () {
      if (!cli) this.skip(); // scripts/test always sets it
    });

    it('a user-supplied TEMPORAL_ADDRESS that does not answer is refused with a clear message', async () => {
      const port = await freePort();
      await assert.rejects(checkTemporal(cli!, { kind: 'external', address: `127.0.0.1:${port}` }), (err: Error) => err instanceof ProvisionError && /TEMPORAL_ADDRESS=127.0.0.1:\d+ doesn't answer a Temporal health check/.test(err.message));
    });

    it('a dev server killed with SIGKILL is started again as its own child, on the same address and SQLite file', async () => {
      const data = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-ops-temporal-'));
      fs.mkdirSync(path.join(data, 'logs'));
      const [port, uiPort] = [await freePort(), await freePort()];
      const plan = { address: `127.0.0.1:${port}`, port, uiPort };
      const lines: string[] = [];
      const sup = new Supervisor({ log: { say: (m) => void lines.push(m), warn: (m) => void lines.push(m) } });
      try {
        await sup.add(devServer(cli!, plan, data));
        const first = sup.pids()['Temporal dev server'];
        const ns = ['--address', plan.address, '--namespace', 'kept'];
        assert.equal((await run(cli!, ['operator', 'namespace', 'create', ...ns])).code, 0);
        process.kill(first, 'SIGKILL');
        const deadline = Date.now() + 60_000;
        while (!lines.some((l) => /Temporal dev server started again/.test(l)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
        assert.match(lines.join('\n'), new RegExp(`Temporal dev server \\(pid ${first}\\) died after \\d+s \\(killed by SIGKILL\\); restarting in 1s`));
        assert.notEqual(sup.pids()['Temporal dev server'], first);
        assert.ok(await temporalHealthy(cli!, plan.address));
        const described = await run(cli!, ['operator', 'namespace', 'describe', ...ns]);
        assert.equal(described.code, 0, `the namespace made before the kill is still there: ${described.stderr}`);
        // Started on a new file with one partition, so restarted on it with one too.
        assert.equal(devServerPartitions(data), 1);
        assert.ok(fs.existsSync(path.join(data, 'temporal.partitions')));
        assert.ok(fs.existsSync(path.join(data, 'temporal.fairness')));
      } finally {
        await sup.stop();
        fs.rmSync(data, { recursive: true, force: true });
      }
    });
  });
});
