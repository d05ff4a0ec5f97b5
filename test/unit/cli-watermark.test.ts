import assert from 'node:assert/strict';
import { parseArgs, UsageError } from '../../cli/config';

describe('vidhost upload --watermark (SPEC §24)', () => {
  const env = { VIDHOST_API_KEY: 'k' };
  it('takes a watermark id and refuses anything else', () => {
    const id = 'wm_0190d3c8e4a97c1e8f1b2a3c4d5e6f70';
    assert.equal(parseArgs(['upload', 'a.mp4', '--watermark', id], env).watermark, id);
    assert.equal(parseArgs(['upload', 'a.mp4'], env).watermark, undefined);
    assert.throws(() => parseArgs(['upload', 'a.mp4', '--watermark', 'logo.png'], env), UsageError);
    assert.throws(() => parseArgs(['upload', 'a.mp4', '--watermark'], env), UsageError);
  });
});
