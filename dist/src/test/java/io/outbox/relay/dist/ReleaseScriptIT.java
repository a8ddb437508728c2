package io.outbox.relay.dist;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.outbox.relay.dist.UnpackedDistribution.Result;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code scripts/release.sh} on a clone of this repository at HEAD: it refuses bad input and
 * changes nothing then; and it releases 9.9.9 without tests or image (a build of the reactor at the
 * new version, 1 to 3 minutes here): archive, checksums, SBOM, NOTICE, tag, next version.
 */
class ReleaseScriptIT {
  private static final long RELEASE_TIMEOUT_SECONDS = 20 * 60;
  private static final Pattern POM_VERSION = Pattern.compile("<version>([^<]+)</version>");

  @TempDir Path dir;

  @Test
  void refusesBadInputAndChangesNothing() throws IOException {
    Path repo = cloneAtHead();
    String tags = git(repo, "tag", "--list");

    assertRefused(repo, "no version given");
    assertRefused(repo, "malformed version '1.2'", "1.2");
    assertRefused(repo, "malformed version 'v1.2.3'", "v1.2.3");
    assertRefused(repo, "unknown option: --fast", "1.2.3", "--fast");
    assertRefused(repo, "CHANGELOG.md has no section '## [9.9.9]'", "9.9.9", "--no-image");

    addChangelogSection(repo, "9.9.9");
    String head = git(repo, "rev-parse", "HEAD");
    // Without the image helper the image cannot be built: a clear refusal, unless --no-image.
    if (Files.exists(repo.resolve("scripts/image.sh"))) {
      git(repo, "rm", "-q", "scripts/image.sh");
      git(repo, "commit", "-q", "-m", "test: no image script");
      head = git(repo, "rev-parse", "HEAD");
    }
    assertRefused(repo, "scripts/image.sh is missing", "9.9.9", "--skip-tests");

    Files.writeString(repo.resolve("README.md"), "changed\n", StandardCharsets.UTF_8);
    assertRefused(repo, "the working tree is not clean", "9.9.9", "--no-image");
    git(repo, "checkout", "--", "README.md");
    Files.writeString(repo.resolve("untracked.txt"), "new\n", StandardCharsets.UTF_8);
    assertRefused(repo, "untracked.txt", "9.9.9", "--no-image");
    Files.delete(repo.resolve("untracked.txt"));

    git(repo, "tag", "v9.9.9");
    assertRefused(repo, "the tag v9.9.9 already exists", "9.9.9", "--no-image");

    assertThat(git(repo, "rev-parse", "HEAD")).as("no commit").isEqualTo(head);
    assertThat(git(repo, "status", "--porcelain")).as("no change").isEmpty();
    assertThat(git(repo, "tag", "--list").lines())
        .as("no other tag")
        .containsExactlyInAnyOrderElementsOf(
            (tags + "\nv9.9.9").lines().filter(t -> !t.isEmpty()).toList());
    assertThat(pomVersion(repo)).endsWith("-SNAPSHOT");
    assertThat(repo.resolve("target/release")).doesNotExist();
  }

  // A whole build in a clone (60-90 s alone, several minutes beside other builds): in the long
  // tier (scripts/test.sh --long), to keep the suite within its 30 minutes; the refusals above
  // stay in the suite.
  @Tag("long")
  @Test
  void releasesAVersionWithItsChecksumsSbomAndTag() throws Exception {
    Path repo = cloneAtHead();
    addChangelogSection(repo, "9.9.9");

    Result release = release(repo, "9.9.9", "--skip-tests", "--no-image");
    assertThat(release.exitCode()).as(release.toString()).isZero();
    assertThat(release.out()).contains("target/release/9.9.9", "tagged v9.9.9", "9.9.10-SNAPSHOT");

    Path out = repo.resolve("target/release/9.9.9");
    for (String file :
        List.of(
            "outbox-relay-9.9.9.tar.gz",
            "outbox-relay-9.9.9.zip",
            "outbox-relay-slim-9.9.9.tar.gz")) {
      assertThat(out.resolve(file + ".sha256")).content().contains(file);
      Result check =
          UnpackedDistribution.exec(out, Map.of(), List.of("sha256sum", "-c", file + ".sha256"));
      assertThat(check.exitCode()).as(check.toString()).isZero();
      assertThat(check.out()).contains(file + ": OK");
    }

    assertThat(
            new ObjectMapper()
                .readTree(out.resolve("outbox-relay-slim-9.9.9.cdx.json").toFile())
                .path("metadata")
                .path("component")
                .path("version")
                .asText())
        .isEqualTo("9.9.9");
    JsonNode sbom =
        new ObjectMapper().readTree(out.resolve("outbox-relay-9.9.9.cdx.json").toFile());
    assertThat(sbom.path("bomFormat").asText()).isEqualTo("CycloneDX");
    assertThat(sbom.path("metadata").path("component").path("version").asText()).isEqualTo("9.9.9");
    List<String> components = new ArrayList<>();
    sbom.path("components")
        .forEach(c -> components.add(c.path("name").asText() + ":" + c.path("version").asText()));
    assertThat(components)
        .hasSizeGreaterThan(50)
        .contains("outbox-relay-daemon:9.9.9")
        .anyMatch(c -> c.startsWith("kafka-clients:"));

    Path unpacked = Files.createDirectories(dir.resolve("unpacked"));
    Result tar =
        UnpackedDistribution.exec(
            unpacked,
            Map.of(),
            List.of("tar", "-xzf", out.resolve("outbox-relay-9.9.9.tar.gz").toString()));
    assertThat(tar.exitCode()).as(tar.toString()).isZero();
    Path home = unpacked.resolve("outbox-relay-9.9.9");
    assertThat(home.resolve("LICENSE")).isRegularFile();
    assertThat(home.resolve("NOTICE")).content().contains("org.apache.kafka:kafka-clients");
    assertThat(home.resolve("lib/outbox-relay-daemon-9.9.9.jar")).isRegularFile();
    assertThat(home.resolve("CHANGELOG.md")).content().containsPattern("## \\[9\\.9\\.9] - \\d{4}");

    // The tag is the release commit, at 9.9.9; the branch went on to the next snapshot.
    assertThat(git(repo, "cat-file", "-t", "v9.9.9")).isEqualTo("tag");
    assertThat(git(repo, "log", "-1", "--format=%s", "v9.9.9")).isEqualTo("Release 9.9.9");
    assertThat(pomVersion(git(repo, "show", "v9.9.9:pom.xml"))).isEqualTo("9.9.9");
    assertThat(git(repo, "show", "v9.9.9:dist/pom.xml")).contains("<version>9.9.9</version>");
    assertThat(pomVersion(repo)).isEqualTo("9.9.10-SNAPSHOT");
    assertThat(git(repo, "status", "--porcelain")).isEmpty();

    assertRefused(repo, "the tag v9.9.9 already exists", "9.9.9", "--no-image");
  }

  /** A clone of this repository's HEAD commit, with a committer of its own. */
  private Path cloneAtHead() {
    Path root = RepositoryFiles.root();
    assumeTrue(
        Files.exists(root.resolve(".git")),
        "the release script works on a git repository; " + root + " is not one");
    Path repo = dir.resolve("repo");
    Result clone =
        UnpackedDistribution.exec(
            dir, Map.of(), List.of("git", "clone", "-q", root.toString(), repo.toString()));
    assertThat(clone.exitCode()).as(clone.toString()).isZero();
    git(repo, "config", "user.name", "ReleaseScriptIT");
    git(repo, "config", "user.email", "release-script-it@localhost");
    return repo;
  }

  private static void addChangelogSection(Path repo, String version) throws IOException {
    Path changelog = repo.resolve("CHANGELOG.md");
    String text = Files.readString(changelog, StandardCharsets.UTF_8);
    assertThat(text).contains("## [Unreleased]\n");
    Files.writeString(
        changelog,
        text.replace("## [Unreleased]\n", "## [Unreleased]\n\n## [" + version + "]\n\n- Test.\n"),
        StandardCharsets.UTF_8);
    git(repo, "commit", "-q", "-a", "-m", "test: changelog of " + version);
  }

  private static void assertRefused(Path repo, String reason, String... args) {
    Result result = release(repo, args);
    assertThat(result.exitCode()).as(result.toString()).isEqualTo(1);
    assertThat(result.err()).as(result.toString()).contains(reason);
  }

  private static Result release(Path repo, String... args) {
    List<String> command = new ArrayList<>(List.of("scripts/release.sh"));
    command.addAll(List.of(args));
    String mavenArgs = System.getenv().getOrDefault("MAVEN_ARGS", "");
    String localRepository = System.getProperty("outbox.maven.repo.local");
    if (localRepository != null) {
      mavenArgs = (mavenArgs + " -Dmaven.repo.local=" + localRepository).strip();
    }
    return UnpackedDistribution.exec(
        repo, Map.of("MAVEN_ARGS", mavenArgs), command, RELEASE_TIMEOUT_SECONDS);
  }

  private static String git(Path repo, String... args) {
    List<String> command = new ArrayList<>(List.of("git"));
    command.addAll(List.of(args));
    Result result = UnpackedDistribution.exec(repo, Map.of(), command);
    assertThat(result.exitCode()).as(result.toString()).isZero();
    return result.out().strip();
  }

  private static String pomVersion(Path repo) throws IOException {
    return pomVersion(Files.readString(repo.resolve("pom.xml"), StandardCharsets.UTF_8));
  }

  /** The root pom's version: it has no parent, so its first {@code <version>}. */
  private static String pomVersion(String pom) {
    Matcher m = POM_VERSION.matcher(pom);
    assertThat(m.find()).as("a <version> in the root pom").isTrue();
    return m.group(1);
  }
}
