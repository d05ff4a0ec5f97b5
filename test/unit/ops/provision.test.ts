import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hasEncoders } from '../../../ops/apt';
import { cached, ensureGoTool, liveEdge, moduleVersion, temporalCli, withLock } from '../../../ops/go-tools';
import { dirs } from '../../../ops/paths';
import { postgresArgs } from '../../../ops/postgres';
import { ensureSecrets, parseEnvFile } from '../../../ops/secrets';
import { mochaArgs, needsWorkflowBundle, summarize } from '../../../ops/test';

describe('ops provisioning', () => {
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-ops-'));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('dirs: VH_TOOLS_DIR and VH_DATA_DIR (relative to the repo) with their subfolders', () => {
    const d = dirs({ HOME: tmp, VH_DATA_DIR: 'd' }, tmp);
    assert.equal(d.tools, path.join(tmp, '.cache/vidhost/tools'));
    assert.equal(d.data, path.join(tmp, 'd'));
    for (const sub of ['bin', 'versions', 'logs']) assert.ok(fs.statSync(path.join(d.tools, sub)).isDirectory());
    assert.ok(fs.statSync(path.join(d.data, 'logs')).isDirectory());
  });

  it('go tools built from this repository (the live edge): versioned by a hash of their source, every package of it', async () => {
    const root = path.join(tmp, 'repo');
    const src = path.join(root, 'ingest');
    fs.mkdirSync(path.join(src, 'cmd/vidhost-edge'), { recursive: true });
    fs.mkdirSync(path.join(src, 'webrtc'), { recursive: true });
    fs.writeFileSync(path.join(src, 'go.mod'), 'module x\n');
    fs.writeFileSync(path.join(src, 'cmd/vidhost-edge/main.go'), 'package main\n');
    fs.writeFileSync(path.join(src, 'webrtc/server.go'), 'package webrtc\n');
    fs.writeFileSync(path.join(src, 'README.md'), 'not source\n');
    const v1 = liveEdge(root);
    assert.match(v1.version, /^src-[0-9a-f]{16}$/);
    assert.equal(v1.sourceDir, src);
    assert.equal(v1.name, 'vidhost-edge');
    assert.equal(v1.pkg, './cmd/vidhost-edge');
    fs.writeFileSync(path.join(src, 'README.md'), 'edited\n');
    assert.equal(liveEdge(root).version, v1.version, 'a non-Go file changed the version');
    const d = dirs({ HOME: tmp }, tmp);
    fs.writeFileSync(path.join(d.tools, 'bin', 'vidhost-edge'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(d.tools, 'versions', 'vidhost-edge'), `${v1.version}\n`);
    assert.equal(await cached(v1, d.tools), true);
    // A change in a package below ingest/ (not only its top folder) is a new version.
    fs.writeFileSync(path.join(src, 'webrtc/server.go'), 'package webrtc // edited\n');
    const v2 = liveEdge(root);
    assert.notEqual(v2.version, v1.version);
    assert.equal(await cached(v2, d.tools), false, 'an edited source must rebuild');
    fs.writeFileSync(path.join(src, 'cmd/vidhost-edge/main.go'), 'package main // edited\n');
    assert.notEqual(liveEdge(root).version, v2.version);
    assert.equal(await ensureGoTool(v2, d.tools, { LIVE_EDGE_PATH: path.join(d.tools, 'bin', 'vidhost-edge') }), path.join(d.tools, 'bin', 'vidhost-edge'));
  });

  it('go tools: the module version built into a binary, the version marker, an explicit *_PATH', async () => {
    const out = 'path\tgithub.com/temporalio/cli/cmd/temporal\nmod\tgithub.com/temporalio/cli\tv1.5.1\th1:abc=\ndep\tgithub.com/x/y\tv0.1.0\n';
    assert.equal(moduleVersion(out, 'github.com/temporalio/cli'), 'v1.5.1');
    assert.equal(moduleVersion(out, 'github.com/versity/versitygw'), undefined);
    const d = dirs({ HOME: tmp }, tmp);
    const bin = path.join(d.tools, 'bin', 'temporal');
    fs.writeFileSync(bin, '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(d.tools, 'versions', 'temporal'), 'v1.5.1\n');
    assert.equal(await cached(temporalCli('v1.5.1'), d.tools), true);
    // A new pin means a rebuild.
    assert.equal(await cached(temporalCli('v1.6.0'), d.tools), false);
    assert.equal(await ensureGoTool(temporalCli('v1.5.1'), d.tools, { PATH: '' }), bin);
    assert.equal(await ensureGoTool(temporalCli(), d.tools, { TEMPORAL_CLI_PATH: bin }), bin);
    await assert.rejects(ensureGoTool(temporalCli(), d.tools, { TEMPORAL_CLI_PATH: path.join(tmp, 'nope') }), /TEMPORAL_CLI_PATH=.* is not an executable file/);
  });

  it('withLock: concurrent builds of one tool run one after the other; a dead owner\'s lock is taken over', async () => {
    const lock = path.join(tmp, '.t.lock');
    const events: string[] = [];
    let waits = 0;
    const job = (n: number) => withLock(lock, () => void (waits += 1), async () => {
      events.push(`start ${n}`);
      await new Promise((r) => setTimeout(r, 100));
      events.push(`end ${n}`);
    });
    await Promise.all([job(1), job(2)]);
    assert.deepEqual(events, ['start 1', 'end 1', 'start 2', 'end 2']);
    assert.equal(waits, 1);
    fs.mkdirSync(lock);
    fs.writeFileSync(path.join(lock, 'pid'), '999999999');
    assert.equal(await withLock(lock, () => assert.fail('waited on a dead owner'), async () => 'ran'), 'ran');
    assert.ok(!fs.existsSync(lock));
  });

  it('ffmpeg must have libx264 and aac', () => {
    const both = ' V....D libx264              libx264 H.264 / AVC\n A....D aac                  AAC (Advanced Audio Coding)\n';
    assert.equal(hasEncoders(both), true);
    assert.equal(hasEncoders(' A....D aac                  AAC\n'), false);
  });

  it('our Postgres cluster listens on loopback TCP only, with a socket only when its path fits', () => {
    assert.deepEqual(postgresArgs('/d/pg/data', 54329, '/d/pg/run'), ['-D', '/d/pg/data', '-p', '54329', '-k', '/d/pg/run', '-c', 'listen_addresses=127.0.0.1']);
    assert.equal(postgresArgs('/d', 1, `/${'x'.repeat(100)}`)[5], '');
  });

  it('secrets.env is made once, completed when older, and never rotated by a rerun', () => {
    const f = path.join(tmp, 'secrets.env');
    fs.writeFileSync(f, '# old\nUPLOAD_SIGNING_SECRET=abc');
    const first = ensureSecrets(f);
    assert.equal(first.UPLOAD_SIGNING_SECRET, 'abc');
    assert.match(first.PLAYBACK_SIGNING_KEYS, /^k1:[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(ensureSecrets(f), first);
    assert.equal(fs.statSync(f).mode & 0o777, 0o600);
    assert.deepEqual(parseEnvFile('A=1\n#B=2\n=x\nC=a=b\n'), { A: '1', C: 'a=b' });
  });

  it('scripts/test: the default spec only when no test path is named; the closing line from mocha\'s epilogue', () => {
    assert.deepEqual(mochaArgs(['--grep', 'x'], false), ['--grep', 'x', 'test/**/*.test.ts']);
    assert.deepEqual(mochaArgs(['test/unit'], true), ['--color', 'test/unit']);
    assert.equal(summarize('\n  \x1b[32m 12 passing\x1b[0m (3s)\n  1 pending\n  2 failing\n', 1).line, '12 passed, 2 failed, 1 skipped');
    assert.equal(summarize('  3 passing (1s)\n', 0).line, '3 passed, 0 failed');
    const crash = summarize('SyntaxError: nope\n', 1);
    assert.equal(crash.line, '0 passed, 1 failed');
    assert.match(crash.note!, /without reporting failing tests/);
  });

  it('scripts/test bundles the workflows for a run unless it names only unit tests (which start no worker)', () => {
    assert.equal(needsWorkflowBundle([]), true);
    assert.equal(needsWorkflowBundle(['--grep', 'x']), true);
    assert.equal(needsWorkflowBundle(['test/unit/a.test.ts', './test/unit/ops/b.test.ts']), false);
    assert.equal(needsWorkflowBundle(['test/unit/a.test.ts', 'test/upload/crash.test.ts']), true);
  });
});
