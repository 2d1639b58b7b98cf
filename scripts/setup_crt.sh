#!/usr/bin/env bash
# Builds the AWS Common Runtime C libraries (aws-c-s3 and what it stands on) from the pinned `awscrt`
# PyPI sdist, once, into $AWSCRT_ROOT/install: static, -fPIC, Release, libcrypto from Debian's OpenSSL.
# Usage: setup_crt.sh [libcrypto]   libcrypto = openssl (default, what the project uses) or aws-lc
# (for measuring the alternative; it installs into $AWSCRT_ROOT/install-aws-lc). See docs/S3.md.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

LIBCRYPTO="${1:-openssl}"
case "$LIBCRYPTO" in
  openssl) PREFIX="$AWSCRT_ROOT/install"; CRYPTO_ARGS=(-DUSE_OPENSSL=ON) ;;
  aws-lc) PREFIX="$AWSCRT_ROOT/install-aws-lc"; CRYPTO_ARGS=(-DUSE_OPENSSL=OFF) ;;
  *) log "setup_crt.sh: unknown libcrypto '$LIBCRYPTO' (openssl or aws-lc)"; exit 2 ;;
esac
# Our patches to the sdist's sources (scripts/patches/awscrt-*.patch), applied in name order; the stamp holds their
# hash, so changing a patch rebuilds. The stamp is written last, so an interrupted build is redone, not half-trusted.
PATCHES=("$REPO_ROOT"/scripts/patches/awscrt-*.patch)
PATCH_ID="$(cat "${PATCHES[@]}" | sha256sum | cut -c1-16)"
STAMP="$PREFIX/.complete"
[ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$PATCH_ID" ] && exit 0

SDIST="$CACHE_ROOT/sdist/awscrt-$AWSCRT_VERSION.tar.gz"
if [ ! -f "$SDIST" ]; then
  log "fetching the awscrt==$AWSCRT_VERSION sdist (the AWS CRT C sources under crt/)"
  mkdir -p "$CACHE_ROOT/sdist"
  PIP="$VENV/bin/pip"; [ -x "$PIP" ] || PIP="python3 -m pip"
  $PIP download -q --no-deps --no-binary awscrt "awscrt==$AWSCRT_VERSION" -d "$CACHE_ROOT/sdist"
fi
# Unpacked afresh on every build, so the patches always apply to the pinned sources.
rm -rf "$AWSCRT_ROOT/src.tmp" && mkdir -p "$AWSCRT_ROOT/src.tmp"
tar xzf "$SDIST" -C "$AWSCRT_ROOT/src.tmp" --strip-components=1
for p in "${PATCHES[@]}"; do
  patch -s -p1 -d "$AWSCRT_ROOT/src.tmp" < "$p" || { log "setup_crt.sh: $p does not apply"; exit 1; }
done
rm -rf "$AWSCRT_ROOT/src" && mv "$AWSCRT_ROOT/src.tmp" "$AWSCRT_ROOT/src"

log "building the AWS CRT $AWSCRT_VERSION C libraries with $LIBCRYPTO (once, a few minutes)"
BUILD="$AWSCRT_ROOT/build-$LIBCRYPTO"
rm -rf "$BUILD" "$PREFIX"
# The flags follow the sdist's own setup.py (_build_dependencies_impl) and crt/CMakeLists.txt, which
# already force static libraries, -fPIC and no tests; Release instead of RelWithDebInfo keeps the
# archives small. s2n is prebuilt at configure time by that CMakeLists, so the parallel level must be
# set in the environment to reach it as well.
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
start=$(date +%s)
nice -n 10 cmake -S "$AWSCRT_ROOT/src/crt" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_SHARED_LIBS=OFF \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_TESTING=OFF \
  -DAWS_USE_LIBCRYPTO_TO_SUPPORT_ED25519_EVERYWHERE=ON "${CRYPTO_ARGS[@]}" >"$AWSCRT_ROOT/build-$LIBCRYPTO.log" 2>&1 \
  || { tail -40 "$AWSCRT_ROOT/build-$LIBCRYPTO.log"; exit 1; }
nice -n 10 cmake --build "$BUILD" --target install >>"$AWSCRT_ROOT/build-$LIBCRYPTO.log" 2>&1 \
  || { tail -40 "$AWSCRT_ROOT/build-$LIBCRYPTO.log"; exit 1; }
log "AWS CRT built in $(( $(date +%s) - start )) s into $PREFIX"
rm -rf "$BUILD"
echo "$PATCH_ID" > "$STAMP"
