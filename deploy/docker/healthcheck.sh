#!/bin/sh
# The image's HEALTHCHECK: asks the service this container runs, found among its processes (the
# command line of the process running flags-server or flags-proxy, wherever the entry point or an
# init such as `docker run --init` put it):
#   flags-server   flags-server ready   (GET /ready: it listens and has loaded from its database)
#   flags-proxy    flags-proxy health   (GET /internal-backstage/health)
# Each asks on the port the container's environment gives its service (SERVER_PORT or PORT for
# flags-server, PORT or PROXY_PORT for flags-proxy), else its default. Exit 0: healthy; 1: not, or
# no flags service runs here (`docker run … flags sh`).
set -eu
for cmdline in /proc/[0-9]*/cmdline; do
  # The first argument of a node process that is not an option (flags-proxy starts node with
  # `--max-semi-space-size`) is the script it runs: the command's path.
  script=$(tr '\0' '\n' <"$cmdline" 2>/dev/null | sed 1d | grep -m 1 -v '^-') || continue
  case "$script" in
    flags-server | */flags-server) exec flags-server ready ;;
    flags-proxy | */flags-proxy) exec flags-proxy health ;;
  esac
done
echo "not healthy: neither flags-server nor flags-proxy runs in this container" >&2
exit 1
