# outbox-relay container image: the distribution archive (dist/) on a small Java 17 JRE, run as a
# non-root user. Built from the source tree; the build stage needs only Maven Central.
#
#   docker build -t outbox-relay .
#   docker run --rm -v "$PWD/config/relay.conf:/etc/outbox-relay/relay.conf:ro" \
#     -e APP_DB_PASSWORD=... -p 9400:9400 outbox-relay
#
# The configuration is read from /etc/outbox-relay/relay.conf (mount it, or your own directory at
# /etc/outbox-relay); secrets come from the environment (${?VAR} in the file). Other commands:
#   docker run --rm -v ...:/etc/outbox-relay:ro outbox-relay migrate --config /etc/outbox-relay/relay.conf
# The file's http.host must be "0.0.0.0" for the health check and the metrics scraper to reach it.
# docs/operations.md describes the image; DeploymentFilesIT checks this file's paths and user.

# ---- build: the distribution archive, tests skipped (CI runs them) ------------------------------
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY . .
RUN mvn -B -q -Dstyle.color=never -Dmaven.test.skip=true -Dspotless.check.skip=true \
      package -pl dist -am \
 && mkdir -p /opt/outbox-relay \
 && tar -xzf dist/target/outbox-relay-*.tar.gz -C /opt/outbox-relay --strip-components=1

# ---- runtime ------------------------------------------------------------------------------------
FROM eclipse-temurin:17-jre

RUN groupadd --system --gid 10001 outbox \
 && useradd --system --uid 10001 --gid outbox --home-dir /opt/outbox-relay \
      --no-create-home --shell /usr/sbin/nologin outbox \
 && mkdir -p /etc/outbox-relay

COPY --from=build --chown=root:root /opt/outbox-relay /opt/outbox-relay
# The shipped example; a mounted file or directory replaces it.
COPY --chown=root:root config/relay.conf /etc/outbox-relay/relay.conf

ENV OUTBOX_RELAY_HOME=/opt/outbox-relay \
    JAVA_OPTS="-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError" \
    PATH=/opt/outbox-relay/bin:$PATH

# Non-root, numeric so that runAsNonRoot policies can verify it.
USER 10001:10001
WORKDIR /opt/outbox-relay

# /metrics, /health/live, /health/ready (outbox-relay.http.port).
EXPOSE 9400

HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD curl -fsS http://127.0.0.1:9400/health/live || exit 1

# SIGTERM (docker stop) makes the relay finish in-flight publishes and exit 0 within its
# shutdown-timeout: give `docker stop -t` at least that much.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/opt/outbox-relay/bin/outbox-relay"]
CMD ["run", "--config", "/etc/outbox-relay/relay.conf"]
