#!/usr/bin/env bash
# Cuts a release of outbox-relay from a clean checkout (docs/releasing.md).
#
#   scripts/release.sh 0.1.0                    the full release: the whole test suite first
#   scripts/release.sh 0.1.0 --skip-tests       no tests: only the archive's build
#   scripts/release.sh 0.1.0 --no-image         no container image (podman not needed)
#
# What it runs, in order:
#   1. checks, before changing anything: VERSION is MAJOR.MINOR.PATCH; the working tree is clean
#      (no change, no untracked file); the tag vVERSION does not exist; CHANGELOG.md has a section
#      "## [VERSION]"; unless --no-image, scripts/image.sh exists and podman runs.
#   2. sets VERSION in every pom (versions-maven-plugin's versions:set) and dates the CHANGELOG
#      section;
#   3. builds: by default scripts/test.sh, the full suite as CI runs it (it starts the services of
#      scripts/services.sh; about 25 minutes), whose build also makes the archive; with
#      --skip-tests, `mvn clean package -pl dist,dist/slim -am -DskipTests` (a few minutes; the
#      tests are compiled, not run: the slim archive's module needs dist's test jar);
#   4. writes into target/release/VERSION/: outbox-relay-VERSION.tar.gz and .zip and the slim
#      archive outbox-relay-slim-VERSION.tar.gz (polling with the Kafka and RabbitMQ sinks), each
#      with its .sha256 (sha256sum format: `sha256sum -c outbox-relay-VERSION.tar.gz.sha256`), and
#      their CycloneDX SBOMs outbox-relay-VERSION.cdx.json and outbox-relay-slim-VERSION.cdx.json;
#   5. unless --no-image, builds the image outbox-relay:VERSION from that archive
#      (scripts/image.sh build);
#   6. commits the version ("Release VERSION"), tags it vVERSION (annotated), then sets the next
#      development version MAJOR.MINOR.(PATCH+1)-SNAPSHOT in a second commit. Nothing is pushed.
#
# If a step of 2-5 fails or is interrupted, the poms and CHANGELOG.md are restored and nothing is
# committed.
# Environment: MAVEN_ARGS, extra Maven options for every Maven call (e.g.
# "-Dmaven.repo.local=/path/to/repository"); MVN, the Maven binary (default mvn).
set -Eeuo pipefail

usage() {
  sed -n '2,6p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
}

die() {
  printf 'release: %s\n' "$*" >&2
  exit 1
}

version=""
skip_tests=false
image=true
for arg in "$@"; do
  case "$arg" in
    --skip-tests) skip_tests=true ;;
    --no-image) image=false ;;
    -h | --help) usage; exit 0 ;;
    -*) usage; die "unknown option: $arg" ;;
    *)
      [[ -z "$version" ]] || die "one version only, got '$version' and '$arg'"
      version="$arg"
      ;;
  esac
done
[[ -n "$version" ]] || { usage; die "no version given (e.g. scripts/release.sh 0.1.0)"; }
[[ "$version" =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$ ]] ||
  die "malformed version '$version': expected MAJOR.MINOR.PATCH, e.g. 0.1.0"
next_version="${BASH_REMATCH[1]}.${BASH_REMATCH[2]}.$((BASH_REMATCH[3] + 1))-SNAPSHOT"
tag="v$version"

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
mvn_bin="${MVN:-mvn}"
# MAVEN_ARGS is split on whitespace on purpose (several options); Maven 3.9 reads it too, and
# repeating an option there is harmless.
# shellcheck disable=SC2206
maven_args=(-B -Dstyle.color=never ${MAVEN_ARGS:-})

# ---- 1. checks: nothing is changed before they all pass --------------------------------------
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || die "$root is not a git working tree"
dirty="$(git status --porcelain)"
[[ -z "$dirty" ]] || die "the working tree is not clean (commit or stash first):
$dirty"
if git rev-parse -q --verify "refs/tags/$tag" >/dev/null; then
  die "the tag $tag already exists (at $(git rev-parse --short "$tag^{commit}"))"
fi
# The root pom has no parent: its first <version> is the project's.
current="$(grep -m1 -o '<version>[^<]*</version>' pom.xml | sed 's/<[^>]*>//g')"
[[ -n "$current" ]] || die "cannot read the project's version from pom.xml"
[[ "$current" == *-SNAPSHOT ]] || die "the poms' version is $current, not a -SNAPSHOT: release from a development version"
grep -qxF "## [$version]" CHANGELOG.md ||
  die "CHANGELOG.md has no section '## [$version]' (undated): write the release's entry first"
if [[ "$image" == true ]]; then
  [[ -x scripts/image.sh ]] ||
    die "scripts/image.sh is missing or not executable: it builds the image; use --no-image to release without one"
  command -v podman >/dev/null 2>&1 ||
    die "podman is not installed: the image needs it (docs/releasing.md); use --no-image to release without one"
  podman info >/dev/null 2>&1 ||
    die "podman cannot run here ('podman info' fails): the image needs it; use --no-image to release without one"
fi

# ---- 2-5: from here a failure restores the tracked files -------------------------------------
restore() {
  trap - ERR INT TERM
  printf 'release: failed or interrupted; restoring the poms and CHANGELOG.md (nothing committed)\n' >&2
  git -C "$root" checkout -- . || true
  exit 1
}
trap restore ERR INT TERM

set_version() {
  "$mvn_bin" "${maven_args[@]}" -q versions:set -DnewVersion="$1" -DprocessAllModules=true \
    -DgenerateBackupPoms=false
  local left
  left="$(git ls-files -z '*pom.xml' | xargs -0 grep -l -F "<version>$2</version>" || true)"
  if [[ -n "$left" ]]; then
    printf 'release: still at version %s after versions:set:\n%s\n' "$2" "$left" >&2
    return 1
  fi
}

echo "release: $current -> $version (then $next_version)"
set_version "$version" "$current"
sed -i "s/^## \[$version\]\$/## [$version] - $(date -u +%Y-%m-%d)/" CHANGELOG.md

if [[ "$skip_tests" == true ]]; then
  echo "release: building the archive (tests skipped)"
  "$mvn_bin" "${maven_args[@]}" -q clean package -pl dist,dist/slim -am -DskipTests
else
  echo "release: running the full suite (scripts/test.sh), which builds the archive"
  "$mvn_bin" "${maven_args[@]}" -q clean
  # shellcheck disable=SC2086
  scripts/test.sh ${MAVEN_ARGS:-}
fi

name="outbox-relay-$version"
out="target/release/$version"
rm -rf "$out"
mkdir -p "$out"
slim="outbox-relay-slim-$version"
for file in "dist/target/$name.tar.gz" "dist/target/$name.zip" "dist/slim/target/$slim.tar.gz"; do
  cp "$file" "$out/"
  (cd "$out" && sha256sum "$(basename "$file")" >"$(basename "$file").sha256")
done
cp "dist/target/$name.cdx.json" "dist/slim/target/$slim.cdx.json" "$out/"
(cd "$out" && sha256sum -c --quiet ./*.sha256)

if [[ "$image" == true ]]; then
  echo "release: building the image outbox-relay:$version"
  scripts/image.sh build --tag "outbox-relay:$version" --archive "$root/$out/$name.tar.gz"
fi
trap - ERR INT TERM

# ---- 6. commits and tag ----------------------------------------------------------------------
git commit -q -a -m "Release $version"
git tag -a "$tag" -m "outbox-relay $version"
set_version "$next_version" "$version"
git commit -q -a -m "Next development version: $next_version"

echo
echo "release: outbox-relay $version, tagged $tag at $(git rev-parse --short "$tag^{commit}"); now at $next_version"
echo "release: in $out/:"
(cd "$out" && ls -l)
if [[ "$image" == true ]]; then
  echo "release: image outbox-relay:$version (podman images outbox-relay)"
else
  echo "release: no image (--no-image)"
fi
echo "release: publish with: git push origin HEAD $tag"
