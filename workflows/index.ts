// The workflow bundle's entry point: every workflow type the workers host.
export { videoWorkflow } from './video/video';
export { webhookDeliveryWorkflow } from './delivery';
export { outputsWorkflow } from './jobs/outputs';
export { analyticsRollupWorkflow } from './analytics/rollup';
export { audioTrackWorkflow } from './audio/track';
export { liveStreamWorkflow } from './live/stream';
export { alignCaptionsWorkflow } from './jobs/captions';
