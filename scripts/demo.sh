#!/usr/bin/env bash
# Runs the demo built by ./run demo (build/host). Output files go to out/.
set -euo pipefail
mkdir -p out
exec build/host/tools/jankprobe-demo out
