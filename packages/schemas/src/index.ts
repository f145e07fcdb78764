export * from './client-features.js';
export * from './context.js';
export * from './error.js';
