#!/usr/bin/env bash
# Runs the demo built by ./run demo (build/host): the JVM host app with jankprobe loaded at start, the
# scripted faults, one line per report, the summary table; writes out/trace.json and out/reports.jsonl.
# Extra arguments go to the launcher (e.g. --check: exit non-zero unless every fault was reported right).
set -euo pipefail
mkdir -p out
if [ ! -x build/host/tools/jankprobe-demo ]; then
  echo "build/host/tools/jankprobe-demo was not built (it needs a JDK and JP_BUILD_TESTS=ON); see build/host.configure.log"
  exit 1
fi
exec build/host/tools/jankprobe-demo --out out "$@"
