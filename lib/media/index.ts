// Node-dependent entry point. Workflow (deterministic) code must import './ladder' or './args'
// directly: this index pulls in child_process via run.ts and probe.ts.
export * from './ladder';
export * from './args';
export * from './errors';
export * from './run';
export * from './check';
export { probe, type MediaInfo } from './probe';
export * from './input';
export * from './limits';
export * from './sandbox';
export * from './tools';
export { passthroughEligibility, ladderBitrateFor, maxKeyframeGap, remuxArgs, keyframeScanArgs, parseKeyframes, measuredBandwidth, MAX_BITRATE_FACTOR, MAX_KEYFRAME_SPACING_SEGMENTS, type SourceFacts, type Eligibility } from './passthrough';
export * from './chunks';
export * from './bandwidth';
export * from './audio';
