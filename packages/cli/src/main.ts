#!/usr/bin/env node
// The `flags` command's entry point: the only place that reads process.env and exits.
process.stdout.write('flags\n');
