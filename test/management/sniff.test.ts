import assert from 'node:assert/strict';
import fs from 'node:fs';
import { sniffNotVideo } from '../../activities/upload/import';
import { makeClip } from '../support/media';

const pad = (head: Buffer | string) => Buffer.concat([Buffer.from(head as never), Buffer.alloc(64 - Buffer.byteLength(head as never), 0)]);

describe('URL import: content sniff', () => {
  it('lets the first bytes of video containers through', async () => {
    const mp4 = fs.readFileSync(await makeClip({ width: 320, height: 240, seconds: 2 })).subarray(0, 64);
    const heads: Array<[string, Buffer]> = [
      ['mp4', mp4],
      ['matroska/webm', pad(Buffer.from([0x1a, 0x45, 0xdf, 0xa3]))],
      ['mpeg-ts', Buffer.concat([Buffer.from([0x47, 0x40, 0x00, 0x10]), Buffer.alloc(60, 0xff)])],
      ['avi', pad(Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x24, 0x10, 0, 0]), Buffer.from('AVI LIST')]))],
      ['flv', pad(Buffer.concat([Buffer.from('FLV'), Buffer.from([1, 5, 0, 0, 0, 9])]))],
      ['quicktime', pad(Buffer.concat([Buffer.from([0, 0, 0, 0x14]), Buffer.from('ftypqt  ')]))],
    ];
    for (const [name, head] of heads) assert.equal(sniffNotVideo(head), null, name);
  });

  it('names what it refuses', () => {
    const cases: Array<[Buffer, RegExp]> = [
      [Buffer.alloc(0), /empty/],
      [Buffer.from('<!DOCTYPE html><html>'), /HTML/],
      [Buffer.from('\uFEFF  <?xml version="1.0"?>'), /HTML, XML/],
      [Buffer.from('{"error":"not found"}'), /JSON/],
      [Buffer.from('#EXTM3U\n#EXT-X-VERSION:3\n'), /text/],
      [pad('%PDF-1.7'), /PDF/],
      [pad(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a])), /PNG/],
      [pad(Buffer.from([0xff, 0xd8, 0xff, 0xe0])), /JPEG/],
      [pad('GIF89a'), /GIF/],
      [pad(Buffer.from([0x50, 0x4b, 0x03, 0x04])), /ZIP/],
    ];
    for (const [head, why] of cases) assert.match(sniffNotVideo(head) ?? 'null', why, head.toString('latin1'));
  });
});
