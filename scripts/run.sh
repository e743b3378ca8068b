#!/usr/bin/env bash
set -uo pipefail
top=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)

# Debian 12 packages the build and tests use. Installed only when missing, so a second run is quick.
packages=(cmake g++ clang lld llvm libclang-rt-14-dev libgtest-dev libbenchmark-dev libelf-dev
          libcapstone-dev rapidjson-dev openjdk-17-jdk-headless qemu-user
          g++-aarch64-linux-gnu g++-arm-linux-gnueabihf g++-i686-linux-gnu)

ensure_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "== installing: ${missing[*]}"
    local sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null \
      || { echo "apt-get install failed"; exit 1; }
  fi
}

# configure_build DIR [cmake args...]
configure_build() {
  local dir=$1; shift
  cmake -S "$top" -B "$dir" -G "Unix Makefiles" "$@" >"$dir.configure.log" 2>&1 \
    || { cat "$dir.configure.log"; return 1; }
  cmake --build "$dir" -j "$jobs" >"$dir.build.log" 2>&1 || { tail -60 "$dir.build.log"; return 1; }
}

failures=()
stage() {  # stage NAME command...
  local name=$1; shift
  local t0=$SECONDS
  echo "== $name"
  if "$@"; then echo "== $name: ok ($((SECONDS - t0)) s)"; else echo "== $name: FAILED"; failures+=("$name"); fi
}

cross_abi() {  # engine and its tests, cross-compiled, run under qemu-user
  local abi=$1
  configure_build "build/cross-$abi" -DCMAKE_TOOLCHAIN_FILE="$top/cmake/toolchain-$abi.cmake" \
    -DJP_ENGINE_ONLY=ON -DJP_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo || return 1
  (cd "build/cross-$abi" && ctest --output-on-failure -j "$jobs" >../cross-$abi.ctest.log 2>&1); local rc=$?
  tail -3 "build/cross-$abi.ctest.log"
  [ $rc -eq 0 ] || cat "build/cross-$abi.ctest.log" | tail -80
  return $rc
}

sanitized() {
  configure_build build/asan -DJP_SANITIZE=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DJP_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug || return 1
  (cd build/asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j "$jobs" >../asan.ctest.log 2>&1); local rc=$?
  tail -3 build/asan.ctest.log
  [ $rc -eq 0 ] || tail -80 build/asan.ctest.log
  return $rc
}

fuzz() {  # libFuzzer over ELF file images, seeded from the fixture libraries
  configure_build build/fuzz -DJP_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DJP_BUILD_TESTS=ON -DJP_BUILD_BENCH=OFF -DJP_BUILD_TOOLS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo || return 1
  local ok=0
  for target in build/fuzz/fuzz/*_fuzzer; do
    [ -x "$target" ] || continue
    local name; name=$(basename "$target")
    local corpus="build/fuzz/corpus-$name"; mkdir -p "$corpus"
    cp build/fuzz/tests/fixtures/*.so "$corpus/" 2>/dev/null || true
    cp build/fuzz/tests/fixtures/*/*.so "$corpus/" 2>/dev/null || true
    cp tests/plt/fuzz_regressions/* "$corpus/" 2>/dev/null || true  # inputs that once failed: run first
    "$target" -max_total_time="${JP_FUZZ_SECONDS:-60}" -rss_limit_mb=2048 -max_len=262144 \
      -artifact_prefix=build/fuzz/ "$corpus" \
      >"build/fuzz/$name.log" 2>&1 || { tail -40 "build/fuzz/$name.log"; ok=1; }
    grep -E "^#[0-9]+[[:space:]]+DONE" "build/fuzz/$name.log" | tail -1
  done
  return $ok
}

host_tests() {
  configure_build build/host -DCMAKE_BUILD_TYPE=RelWithDebInfo || return 1
  (cd build/host && ctest --output-on-failure -j "$jobs")
}

case "${1:-}" in
  test)
    ensure_packages
    mkdir -p build
    t0=$SECONDS
    if [ -z "${JP_QUICK:-}" ]; then
      stage "cross aarch64" cross_abi aarch64
      stage "cross armhf" cross_abi armhf
      stage "cross i686" cross_abi i686
      stage "asan+ubsan" sanitized
      stage "fuzz" fuzz
    fi
    echo "== earlier stages took $((SECONDS - t0)) s; failed: ${failures[*]:-none}"
    # The host suite runs last so that the run ends with ctest's summary line.
    echo "== host tests"
    host_tests; rc=$?
    if ((${#failures[@]})); then echo "FAILED stages: ${failures[*]}"; exit 1; fi
    exit $rc
    ;;
  demo)
    ensure_packages
    mkdir -p build
    configure_build build/host -DCMAKE_BUILD_TYPE=RelWithDebInfo || exit 1
    exec scripts/demo.sh "${@:2}"
    ;;
  bench)
    ensure_packages
    mkdir -p build
    configure_build build/bench -DCMAKE_BUILD_TYPE=Release -DJP_BUILD_TESTS=ON || exit 1
    for b in build/bench/bench/*_bench; do echo "== $b"; "$b" "${@:2}"; done
    ;;
  *)
    echo "usage: ./run demo | ./run test | ./run bench"; exit 2 ;;
esac
