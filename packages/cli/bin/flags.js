#!/usr/bin/env node
// The `flags` command. This file is in the repository (not built) so that `npm ci` can link it
// before `prepare` builds `dist/`; it only starts the built entry point.
import '../dist/main.js';
