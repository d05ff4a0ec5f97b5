// Types for the parts of webvtt-parser (w3c/webvtt.js, untyped) that lib/outputs/captions.ts uses.
declare module 'webvtt-parser' {
  export interface WebVTTCue {
    id: string;
    startTime: number;
    endTime: number;
    text: string;
  }
  export interface WebVTTError {
    message: string;
    line?: number;
    col?: number;
  }
  export class WebVTTParser {
    constructor(entities?: Record<string, string>);
    parse(input: string, mode?: 'metadata' | 'subtitles' | 'chapters'): { cues: WebVTTCue[]; errors: WebVTTError[]; time: number };
  }
}
