export { applyDelta, type DeltaEvent } from './delta.js';
export { Doorkeeper } from './doorkeeper.js';
export { murmur3 } from './hash/murmur3.js';
export { compile } from './snapshot.js';
export * from './types.js';
