#!/bin/bash
# Moved to scripts/gpu/draws.sh (`cargo xtask gpu-run draws`); this path stays for the commands
# that still name it. Same variables (OUT, and those the script's header lists).
exec bash "$(dirname "$0")/gpu/draws.sh" "$@"
