import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../lib/logger';
import { sdkLogger } from '../../workers/sdk-log';

describe('worker: the Temporal SDK log (quiet start)', () => {
  it('drops the transcode queue\'s expected "No workflows registered" and forwards real warnings as one line of ours', () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const sdk = sdkLogger(createLogger('info', 'worker', sink));
    sdk.warn('No workflows registered, not polling for workflow tasks', { sdkComponent: 'worker', taskQueue: 'transcode' });
    sdk.info('Worker state changed', { state: 'RUNNING' });
    sdk.warn('Failed to poll for activity task', { taskQueue: 'transcode' });
    assert.equal(lines.length, 1, lines.join(''));
    const entry = JSON.parse(lines[0]);
    assert.equal(entry.msg, 'Failed to poll for activity task');
    assert.equal(entry.level, 40);
    assert.equal(entry.name, 'worker');
    assert.equal(entry.sdk.taskQueue, 'transcode');
  });
});
