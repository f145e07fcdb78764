#!/bin/sh
//usr/bin/env true; case "$NODE_OPTIONS" in *semi-space-size*) exec node "$0" "$@" ;; esac; exec node --max-semi-space-size=4 "$0" "$@"
// The `flags-proxy` command. The line above is for sh, which runs this file as a command: it
// starts node on this same file (`exec`: same process, signals reach node) with V8's young
// generation capped at 2 × 4 MB. A proxy keeps little alive between requests, and V8's default
// cap of 2 × 16 MB on a large machine costs ~20 MB of peak memory for no measurable throughput;
// node cannot change the cap once running. A semi-space size in NODE_OPTIONS wins. Run by node
// itself (`node flags-proxy.js`, e.g. where there is no sh), that line is a comment, and V8 keeps
// its default sizing.
//
// This file is in the repository (not built) so that `npm ci` can link it before `prepare` builds
// `dist/`; it only starts the built entry point.
import '../dist/main.js';
