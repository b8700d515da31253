// Test helpers for other packages' tests (`@gateway/telemetry/testing`).
export { createMemorySpans, waitForSpans, spanNamed, allAttributeText } from './memory-spans.js';
export { createMemoryLog } from './memory-log.js';
