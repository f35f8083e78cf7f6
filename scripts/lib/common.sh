# Shared by scripts/demo, scripts/test and scripts/bench: find the toolchain and make sure
# the system packages the build needs are present, installing them when running as root.

die() { echo "$(basename "$0"): $*" >&2; exit 1; }

# SwiftPM leaves a few empty TemporaryDirectory.* folders in $TMPDIR at every run (its own
# doing: about 60 for a scripts/test run, 75 for a bench). The scripts' builds keep them in
# .build/swiftpm-tmp instead, which goes with .build. Only builds: a test run keeps the
# caller's TMPDIR, where the tests make their temporary folders, since a socket's path in
# one is limited to 107 bytes.
swiftpm_tmp="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.build/swiftpm-tmp"
swift() {
  if [ "${1:-}" = build ]; then
    mkdir -p "$swiftpm_tmp"
    TMPDIR="$swiftpm_tmp" command swift "$@"
  else
    command swift "$@"
  fi
}

require_swift() {
  type -P swift >/dev/null 2>&1 || die "swift is not on PATH; install Swift 6.1 or newer (https://swift.org/install) and retry"
}

# require_packages PKG… : installs missing Debian packages (root), or prints the command.
require_packages() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ]; then
    echo "installing ${missing[*]} …"
    (apt-get install -y "${missing[@]}" >/dev/null 2>&1) || { apt-get update >/dev/null 2>&1 && apt-get install -y "${missing[@]}" >/dev/null; } \
      || die "could not install ${missing[*]}; run: apt-get update && apt-get install -y ${missing[*]}"
  else
    die "missing packages: ${missing[*]}. Run: sudo apt-get install -y ${missing[*]}"
  fi
}

# optional_package PKG WHAT: installs PKG if the archive has it (root), else says that WHAT
# is skipped and why; succeeds only when PKG ends up installed.
optional_package() {
  local pkg="$1" what="$2"
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" && return 0
  local candidate
  candidate="$(apt-cache policy "$pkg" 2>/dev/null | awk '/Candidate:/ { print $2 }')"
  if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then
    echo "skipping $what: $pkg is not in this system's package archive"
  elif [ "$(id -u)" -ne 0 ]; then
    echo "skipping $what: $pkg is not installed (sudo apt-get install -y $pkg)"
  elif apt-get install -y "$pkg" >/dev/null 2>&1; then
    return 0
  else
    echo "skipping $what: apt-get install $pkg failed"
  fi
  return 1
}

# The Debian packages the build links against (libsodium: the daemon's Argon2id password hashes).
BUILD_PACKAGES=(libsystemd-dev libsqlite3-dev libsodium-dev)

# Packages the bench needs for its D-Bus peers: the bus, dbus-send, libdbus headers and
# pkg-config to build the echo service (before Debian 12, dbus-daemon and dbus-send came in
# the single `dbus` package). The desktop peers' packages (xdg-utils, libglib2.0-bin,
# desktop-file-utils) are optional: scripts/bench installs them or notes their rows skipped.
bench_packages() {
  if apt-cache policy dbus-daemon 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    echo dbus-daemon dbus-bin libdbus-1-dev pkgconf gcc
  else
    echo dbus libdbus-1-dev pkg-config gcc
  fi
}

# Packages only the tests need: the real xdg-open (the freedesktop export test); GLib's gio
# with update-desktop-database (the desktop-entry choice is tested against gio mime); for the D-Bus
# activation tests, a private session bus (dbus-daemon), the activatable test app's Python
# bindings for Debian's /usr/bin/python3 (scripts/test-peers/dbus_test_app.py: python3-dbus,
# python3-gi) and GLib's gdbus and gio, which the tests compare with the daemon.
TEST_PACKAGES=(xdg-utils libglib2.0-bin desktop-file-utils python3-dbus python3-gi)

# The package with dbus-daemon (before Debian 12 it came in the single `dbus` package).
dbus_daemon_package() {
  if apt-cache policy dbus-daemon 2>/dev/null | grep -q 'Candidate: [0-9]'; then echo dbus-daemon; else echo dbus; fi
}

# Release builds link the Swift runtime statically: `lsopen` starts in about half the time
# (it is xdg-open's handler, so every URL opened from a desktop pays it), and installed
# binaries do not depend on where the toolchain lives. They go to their own scratch folder,
# .build-release/: in the .build/ that a plain `swift build -c release` (the README's path)
# has used, a static build would try to link GRDB's dynamic-library product against the
# static Foundation and fail (`cannot find -lCoreFoundation`); kept apart, either build can
# come first.
RELEASE_BUILD=(-c release --static-swift-stdlib --scratch-path .build-release)

# The release executables the scripts use. They are built one product at a time: once any
# single product has been built, a plain `swift build -c release --static-swift-stdlib`
# also tries to link GRDB's dynamic-library product (GRDB-dynamic), which cannot link
# against a static Foundation, and the whole build fails.
RELEASE_PRODUCTS=(launchservicesd lsopen lsctl xyz todolist lstestapp wordrev schemedemo liteapp fullapp tweeter x-sadun-services)

# build_release [PRODUCT…]: builds the named products (default: RELEASE_PRODUCTS), release.
build_release() {
  local products=("$@")
  [ ${#products[@]} -gt 0 ] || products=("${RELEASE_PRODUCTS[@]}")
  local product
  for product in "${products[@]}"; do
    swift build "${RELEASE_BUILD[@]}" --product "$product" || return 1
  done
}
