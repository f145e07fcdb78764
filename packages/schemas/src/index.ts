export * from './client-features.js';
export * from './context.js';
export * from './error.js';
export * from './import-export.js';
export * from './insights.js';
export * from './metrics.js';
export * from './register.js';
export * from './signup-token.js';
