#!/usr/bin/env bash
# The container image with podman (no Docker engine needed), from the distribution archive that
# the build already made: the Dockerfile's target `from-archive`, which runs no Maven.
#
#   scripts/image.sh base [--force]
#       the local base image: Debian bookworm with openjdk-17-jre-headless (and passwd, for the
#       Dockerfile's useradd), made by mmdebstrap from Debian's packages (the machine's apt
#       sources) and imported as $OUTBOX_IMAGE_BASE (localhost/outbox-relay-base:bookworm);
#       nothing is done when it exists already. For machines that reach no container registry;
#       elsewhere pass a public base to `build`.
#   scripts/image.sh build [--tag TAG] [--archive PATH] [--base IMAGE]
#       the relay image TAG (default outbox-relay:<version of the archive>) from PATH (default: the
#       one dist/target/outbox-relay-*.tar.gz), on IMAGE (default: the local base, made first by
#       `base` if missing; e.g. --base eclipse-temurin:17-jre where a registry is reachable).
#       Prints the tag on standard output, everything else on standard error.
#   scripts/image.sh check
#       exit 0 when podman is installed and answers; 3 otherwise, with the reason.
#
# podman settings these machines need (scripts/services.sh up installs podman, runc and mmdebstrap
# and writes them): runc with cgroupfs, no default ulimits (see docs/operations.md). Builds use
# `--isolation chroot` (no runtime needed for RUN steps) and `--format docker` (the OCI format
# has no HEALTHCHECK). Run the image with `--network host` here: no container network is set up.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BASE_IMAGE=${OUTBOX_IMAGE_BASE:-localhost/outbox-relay-base:bookworm}
SUITE=bookworm

log() { printf 'image: %s\n' "$*" >&2; }
die() {
  printf 'image: ERROR: %s\n' "$*" >&2
  exit 1
}

need() { command -v "$1" >/dev/null || die "$1 is not installed: scripts/services.sh up installs it (apt-get install $2)"; }

image_exists() { podman image exists "$1"; }

# The apt sources of the base: the machine's own Debian sources for the suite when it has them (its
# mirror and proxy settings, as apt-get uses them), else mmdebstrap's default mirror.
apt_sources() {
  local f
  for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
    if [[ -f "$f" ]] && grep -Eq "^(Suites:.*[[:space:]]|deb[[:space:]].*[[:space:]])$SUITE([[:space:]]|$)" "$f"; then
      echo "$f"
      return
    fi
  done
}

cmd_base() {
  local force=0
  while (($#)); do
    case "$1" in
      --force) force=1 ;;
      *) die "base: unknown argument $1" ;;
    esac
    shift
  done
  need podman podman
  if ((force == 0)) && image_exists "$BASE_IMAGE"; then
    log "base: $BASE_IMAGE exists"
    return
  fi
  need mmdebstrap mmdebstrap
  # One maker at a time on a machine (the base is the machine's, not the checkout's); a second
  # caller waits, then finds it made.
  exec 8>"${TMPDIR:-/tmp}/outbox-relay-image-base.lock"
  flock -w 1800 8 || die "base: another scripts/image.sh has held the base's lock for 30 minutes"
  if ((force == 0)) && image_exists "$BASE_IMAGE"; then
    log "base: $BASE_IMAGE exists (made meanwhile)"
    exec 8>&-
    return
  fi
  local t0=$SECONDS sources tmp logfile=${TMPDIR:-/tmp}/outbox-relay-image-base.log
  sources=$(apt_sources)
  tmp=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" EXIT
  log "base: making $BASE_IMAGE with mmdebstrap ($SUITE, openjdk-17-jre-headless; ${sources:-default mirror}), log in $logfile"
  # --variant=apt: the Essential packages and apt; dpkg without fsync (a throwaway tree). Docs, man
  # pages and translations are deleted at the end: dpkg's path-exclude would make mmdebstrap
  # filter every package through a Python script (twice as slow), and the JRE's postinst needs
  # /usr/share/man/man1.
  # shellcheck disable=SC2016
  if ! mmdebstrap --variant=apt --include=openjdk-17-jre-headless,passwd \
    --dpkgopt=force-unsafe-io \
    --customize-hook='rm -rf "$1"/usr/share/doc/* "$1"/usr/share/man/* "$1"/usr/share/locale/*' \
    "$SUITE" "$tmp/rootfs.tar" ${sources:+"$sources"} >"$logfile" 2>&1; then
    tail -n 30 "$logfile" >&2
    die "base: mmdebstrap failed; see $logfile"
  fi
  local old=""
  old=$(podman image inspect --format '{{.Id}}' "$BASE_IMAGE" 2>/dev/null || true)
  podman import --quiet \
    --change 'CMD ["/bin/bash"]' \
    --change 'LABEL org.opencontainers.image.description="Debian '"$SUITE"' with openjdk-17-jre-headless (scripts/image.sh base)"' \
    "$tmp/rootfs.tar" "$BASE_IMAGE" >/dev/null
  # --force: the replaced base goes unless images or containers still use it.
  [[ -z "$old" ]] || podman rmi "$old" >/dev/null 2>&1 || true
  rm -rf "$tmp"
  trap - EXIT
  exec 8>&-
  log "base: $BASE_IMAGE made in $((SECONDS - t0))s"
}

cmd_build() {
  local tag="" archive="" base=""
  while (($#)); do
    case "$1" in
      --tag) tag=${2:?--tag needs a value}; shift ;;
      --archive) archive=${2:?--archive needs a value}; shift ;;
      --base) base=${2:?--base needs a value}; shift ;;
      *) die "build: unknown argument $1" ;;
    esac
    shift
  done
  need podman podman
  if [[ -z "$archive" ]]; then
    local found=("$ROOT"/dist/target/outbox-relay-*.tar.gz)
    [[ -f "${found[0]}" ]] || die "build: no dist/target/outbox-relay-*.tar.gz: build it first (mvn -B package -pl dist -am -DskipTests)"
    ((${#found[@]} == 1)) || die "build: several archives in dist/target; pass --archive"
    archive=${found[0]}
  fi
  [[ -f "$archive" ]] || die "build: no archive $archive"
  if [[ -z "$tag" ]]; then
    local name version
    name=$(basename "$archive" .tar.gz)
    version=${name#outbox-relay-}
    tag=outbox-relay:$version
  fi
  if [[ -z "$base" ]]; then
    cmd_base
    base=$BASE_IMAGE
  fi
  local t0=$SECONDS context
  # A build context of the archive alone: nothing else of the checkout is read.
  context=$(mktemp -d)
  # shellcheck disable=SC2064
  trap "rm -rf '$context'" EXIT
  ln "$archive" "$context/outbox-relay.tar.gz" 2>/dev/null || cp "$archive" "$context/outbox-relay.tar.gz"
  log "build: $tag from $archive on $base"
  # The Maven stage (BUILD_IMAGE) is not needed by this target: podman skips it, pulls nothing
  # for it. --layers=false: no intermediate images are kept (the archive differs at every build).
  podman build --quiet --isolation chroot --format docker --layers=false \
    --target from-archive \
    --build-arg RUNTIME_IMAGE="$base" \
    --build-arg ARCHIVE=outbox-relay.tar.gz \
    --file "$ROOT/Dockerfile" --tag "$tag" "$context" >&2
  rm -rf "$context"
  trap - EXIT
  log "build: $tag built in $((SECONDS - t0))s"
  echo "$tag"
}

cmd_check() {
  if ! command -v podman >/dev/null; then
    echo "podman is not installed (scripts/services.sh up installs it)" >&2
    exit 3
  fi
  local out
  if ! out=$(podman info --format '{{.Host.OCIRuntime.Name}} {{.Host.CgroupManager}} {{.Store.GraphDriverName}}' 2>&1); then
    printf 'podman does not answer: %s\n' "$out" >&2
    exit 3
  fi
  echo "podman: runtime, cgroup manager, storage driver: $out"
}

case "${1:-}" in
  base) shift; cmd_base "$@" ;;
  build) shift; cmd_build "$@" ;;
  check) cmd_check ;;
  *)
    echo "usage: $0 base [--force] | build [--tag TAG] [--archive PATH] [--base IMAGE] | check" >&2
    exit 2
    ;;
esac
