#!/usr/bin/env node
// The `flags` command's entry point: the only place that reads process.env and exits.
import { outlivingItsReader } from '@flags/config';
import { run } from './run.js';

// A reader that stops early (`| head`) must not end an apply half-way.
outlivingItsReader(process.stdout);

const code = await run(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
process.exitCode = code;
