# outbox-relay container image: the distribution archive (dist/) on a Java 17 JRE, run as the
# non-root user 10001:10001. Two ways to build it, one runtime stage:
#
#   From source (the default target; the build stage needs only Maven Central):
#     docker build -t outbox-relay .
#     docker build --target from-source -t outbox-relay .   # Docker's legacy builder (see the end)
#   From an archive already built (target `from-archive`: no Maven, only the archive is read):
#     docker build --target from-archive -t outbox-relay .              # dist/target/outbox-relay-*.tar.gz
#     docker build --target from-archive --build-arg ARCHIVE=path/in/context.tar.gz -t outbox-relay .
#     scripts/image.sh build --tag outbox-relay:local --archive dist/target/outbox-relay-<v>.tar.gz
#       (podman, on a base image made from Debian's packages where no registry can be reached)
#
# The base images are build arguments whose defaults are the public images: BUILD_IMAGE (Maven and
# a JDK 17) and RUNTIME_IMAGE (a Java 17 runtime with bash, tar and useradd), e.g.
# --build-arg RUNTIME_IMAGE=localhost/outbox-relay-base:bookworm (scripts/image.sh base).
#
#   docker run --rm -v "$PWD/config/relay.conf:/etc/outbox-relay/relay.conf:ro" \
#     -e APP_DB_PASSWORD=... -p 9400:9400 --stop-timeout 40 outbox-relay
#
# The configuration is read from /etc/outbox-relay/relay.conf (mount it, or your own directory at
# /etc/outbox-relay); secrets come from the environment (${?VAR} in the file). Other commands:
#   docker run --rm -v ...:/etc/outbox-relay:ro outbox-relay migrate --config /etc/outbox-relay/relay.conf
# The health check asks http://127.0.0.1:$OUTBOX_RELAY_HTTP_PORT/health/live (9400 unless the
# variable is set) from inside the container with bash alone (no curl in the image); the file's
# http.host must be "0.0.0.0" for probes and the metrics scraper from outside the container.
# Podman keeps HEALTHCHECK only in the docker format: `podman build --format docker`.
# SIGTERM (`docker stop`) makes the relay finish in-flight publishes and exit 0 within the file's
# shutdown-timeout (30s in config/relay.conf): give `docker stop -t` / --stop-timeout more than that.
# docs/operations.md describes the image; DeploymentFilesTest checks this file's paths and user,
# ImageIT (dist/) builds it from the archive with podman and runs it against PostgreSQL and Kafka.

ARG BUILD_IMAGE=maven:3.9-eclipse-temurin-17
ARG RUNTIME_IMAGE=eclipse-temurin:17-jre

# ---- build: the distribution archive from source, tests skipped (CI runs them) -----------------
FROM ${BUILD_IMAGE} AS build
WORKDIR /src
COPY . .
RUN mvn -B -q -Dstyle.color=never -Dmaven.test.skip=true -Dspotless.check.skip=true \
      package -pl dist -am \
 && mkdir -p /opt/outbox-relay \
 && tar -xzf dist/target/outbox-relay-*.tar.gz -C /opt/outbox-relay --strip-components=1

# ---- runtime: what both targets share -----------------------------------------------------------
FROM ${RUNTIME_IMAGE} AS runtime

RUN groupadd --system --gid 10001 outbox \
 && useradd --system --uid 10001 --gid outbox --home-dir /opt/outbox-relay \
      --no-create-home --shell /usr/sbin/nologin outbox \
 && mkdir -p /etc/outbox-relay /opt/outbox-relay

ENV OUTBOX_RELAY_HOME=/opt/outbox-relay \
    JAVA_OPTS="-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError" \
    PATH=/opt/outbox-relay/bin:$PATH

# Non-root, numeric so that runAsNonRoot policies can verify it. Everything the image installs
# belongs to root: the relay writes nothing to its installation.
USER 10001:10001
WORKDIR /opt/outbox-relay

# /metrics, /health/live, /health/ready (outbox-relay.http.port).
EXPOSE 9400

# GET /health/live over bash's /dev/tcp: healthy on status 200. OUTBOX_RELAY_HTTP_PORT is the
# variable config/docker.conf reads for http.port.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${OUTBOX_RELAY_HTTP_PORT:-9400} && printf 'GET /health/live HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n' >&3 && read -r _ status _ <&3 && [ \"$status\" = 200 ]"]

# The launcher execs java, which is PID 1 and takes SIGTERM as a stop: in-flight publishes finish
# or are released, and it exits 0 within shutdown-timeout.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/opt/outbox-relay/bin/outbox-relay"]
CMD ["run", "--config", "/etc/outbox-relay/relay.conf"]

# ---- from-source: `--target from-source` (and the default, below) -------------------------------
FROM runtime AS from-source
COPY --from=build --chown=root:root /opt/outbox-relay /opt/outbox-relay
COPY --from=build --chown=root:root /opt/outbox-relay/config/relay.conf /etc/outbox-relay/relay.conf

# ---- unpack-archive: an archive built already, taken from the build context as it is -----------
FROM ${RUNTIME_IMAGE} AS unpack-archive
# Relative to the build context; one file (scripts/image.sh makes a context holding only it).
ARG ARCHIVE=dist/target/outbox-relay-*.tar.gz
COPY ${ARCHIVE} /tmp/outbox-relay.tar.gz
RUN mkdir -p /opt/outbox-relay \
 && tar -xzf /tmp/outbox-relay.tar.gz -C /opt/outbox-relay --strip-components=1 --no-same-owner

# ---- from-archive: `--target from-archive` ------------------------------------------------------
FROM runtime AS from-archive
COPY --from=unpack-archive --chown=root:root /opt/outbox-relay /opt/outbox-relay
# The shipped example (the archive's config/relay.conf); a mounted file or directory replaces it.
COPY --from=unpack-archive --chown=root:root /opt/outbox-relay/config/relay.conf /etc/outbox-relay/relay.conf

# ---- the default target: from source ------------------------------------------------------------
# Last, as the default must be. BuildKit (Docker's builder since 23.0, Compose v2's) and podman
# build only the stages their target needs; Docker's legacy builder (DOCKER_BUILDKIT=0, Compose
# v1) builds every stage before it, the archive's too: give it `--target from-source`, which comes
# before them (docker-compose.yml does).
FROM from-source AS default
