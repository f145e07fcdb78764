export { type AppDeps, buildApp, loggerOptions } from './app.js';
export { type TokenGuard, type TokenGuards, tokenGuard, tokenGuards } from './auth/token-guard.js';
export { ConfigError, loadConfig, maskToken, parseClientTokenScope } from './config/load.js';
export {
  type LogLevel,
  type OptionSpec,
  options,
  type ServerConfig,
  type ServerOptions,
  serverSchema,
} from './config/options.js';
export { type Database, openPglite, openPostgres, type Queryable } from './db/database.js';
export { migrate } from './db/migrate.js';
export { openDatabase } from './db/open.js';
export { ApiError, type ErrorCode, errorCatalogue } from './errors.js';
export { runMigrate } from './migrate/command.js';
export { generateContexts } from './migrate/verify.js';
