#!/bin/sh
# The image's entry point. Arguments that are a flags-proxy subcommand or option run flags-proxy
# with them, as Unleash Edge's image runs its binary with `edge`, `offline`, `health` or `ready`:
#   (no arguments)        flags-proxy edge
#   edge|offline|health|ready|-…   flags-proxy <arguments>
#   anything else         that command (`flags-server`, `flags-proxy`, `sh`)
# `exec` replaces this shell, so the service is the container's main process and gets its signals.
set -eu
if [ "$#" -eq 0 ]; then
  set -- edge
fi
case "$1" in
  edge | offline | health | ready | -*) exec flags-proxy "$@" ;;
  *) exec "$@" ;;
esac
