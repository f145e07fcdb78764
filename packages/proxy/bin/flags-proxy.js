#!/bin/sh
//usr/bin/env true; export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}" MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-131072}" MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-131072}"
//usr/bin/env true; case "$NODE_OPTIONS" in *semi-space-size*) exec node "$0" "$@" ;; esac; exec node --max-semi-space-size=4 "$0" "$@"
// The `flags-proxy` command. The two lines above are for sh, which runs this file as a command:
// it starts node on this same file (`exec`: same process, signals reach node) with
// - V8's young generation capped at 2 × 4 MB. A proxy keeps little alive between requests, and
//   V8's default cap of 2 × 16 MB on a large machine costs ~20 MB of peak memory for no
//   measurable throughput; node cannot change the cap once running. A semi-space size in
//   NODE_OPTIONS wins.
// - glibc's allocator held to 2 arenas and to fixed 128 KiB mmap/trim thresholds (other C
//   libraries ignore these). By default GC helper threads get arenas of their own, and once a
//   freed 1 MB response slab has raised the dynamic mmap threshold, later slabs come from the
//   heap and their memory is kept: ~6 MB of peak memory, at no measurable CPU cost. Values
//   already in the environment win.
// Run by node itself (`node flags-proxy.js`, e.g. where there is no sh), those lines are
// comments, and V8 and the allocator keep their defaults.
//
// This file is in the repository (not built) so that `npm ci` can link it before `prepare` builds
// `dist/`; it only starts the built entry point.
import '../dist/main.js';
