#!/usr/bin/env node
// The `flags` command's entry point: the only place that reads process.env and exits.
import { run } from './run.js';

const code = await run(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
process.exitCode = code;
