#!/usr/bin/env bash
# Test/demo services without Docker (docs/testing.md), all on 127.0.0.1: a PostgreSQL cluster of our
# own with wal_level=logical on 25432, Kafka (KRaft, single node) on 9092, RabbitMQ on 5672, NATS
# with JetStream on 24222, Redis on 26379. The machine's own PostgreSQL, NATS and Redis (if any, on
# their usual ports) are never reconfigured, restarted or used.
#
#   scripts/services.sh up       make sure all of them answer (idempotent), waiting until they do
#   scripts/services.sh down     stop what `up` started (never a service that was already running)
#   scripts/services.sh status   one line per service; exit 0 when all are up, 3 otherwise
#   scripts/services.sh env      `export OUTBOX_...=...` lines for the tests: eval "$(scripts/services.sh env)"
#   scripts/services.sh connect up|down|status|fetch
#                                two Kafka Connect workers in distributed mode (not part of `up`)
#
# The ports of our own servers can be moved with OUTBOX_SERVICES_PG_PORT, OUTBOX_SERVICES_NATS_PORT
# and OUTBOX_SERVICES_REDIS_PORT (for `up`, `status` and `env` alike).
#
# How each service is provided:
#   PostgreSQL  Debian's binaries (the postgresql package, installed with apt-get if missing). A
#               throwaway cluster made with initdb under .run/postgres/data (or, when the postgres OS
#               user cannot reach this checkout, under /var/tmp/outbox-relay-postgres-<hash>), trust
#               auth on 127.0.0.1 only, TCP only, wal_level=logical, 20 slots and WAL senders, 200
#               connections; started with pg_ctl (as the postgres OS user when run as root), log in
#               postgres.log beside the data. The data survives `down`/`up`; delete the directory
#               to start afresh. A server already answering on the port is used when it is logical.
#   Kafka       The broker jars from Maven Central (scripts/kafka/pom.xml, copied once into
#               .run/kafka/lib), run as one KRaft node (broker + controller) with a fresh log directory
#               under .run/kafka/data at every start; log in .run/kafka/kafka.log. Broker defaults for
#               message sizes (message.max.bytes ~1 MiB): tests rely on a too-large record being refused.
#   RabbitMQ    Debian's rabbitmq-server (installed with apt-get if missing), started detached when
#               nothing answers on 5672.
#   NATS        Debian's nats-server (installed with apt-get if missing), started with JetStream
#               (-js) when nothing answers on 24222, its store under .run/nats/jetstream, log in
#               .run/nats/nats.log. A server already answering on 24222 is used as it is: it must have
#               JetStream enabled (the NATS sink's tests say so at once if not).
#   Redis       Debian's redis-server (installed with apt-get if missing), started when nothing
#               answers on 26379, without persistence (a throwaway test server), files under
#               .run/redis. A server already answering on 26379 is used as it is.
#
#   Connect     Only with `connect up`: two Kafka Connect workers in distributed mode (group
#               outbox-relay-connect) on $HOST:8083 and :8084 (OUTBOX_CONNECT_PORTS="8083 8084"),
#               from Maven Central jars (scripts/connect/pom.xml: connect-runtime at the broker's
#               version, copied once into .run/connect/lib), against the Kafka above, with
#               plugin.path = connect/target/plugin (build it first: mvn -B -q package -DskipTests
#               -pl connect -am) and exactly.once.source.support=enabled. Pids, configs and logs in
#               .run/connect/worker-<port>.*. `connect down` stops them; `down` does too.
#               `connect fetch` only fetches the worker's jars and prints their directory (tests
#               that start a worker of their own, ConnectRefusalIT).
#
# `up` also installs the tools the deployment-file tests (dist/: DeploymentFilesIT, SystemdUnitIT,
# KubernetesManifestsIT) run, once:
#   docker-compose  Debian's docker-compose (v1, python), without the recommended docker.io engine:
#                   only `docker-compose config` is used.
#   promtool        from Debian's prometheus package, unpacked (apt-get download + dpkg-deb -x) into
#                   /usr/local/lib/outbox-relay-tools and linked as /usr/local/bin/promtool, so that
#                   no Prometheus server is installed or started.
#   kubectl         from Debian's kubernetes-client package, unpacked the same way, for
#                   `kubectl kustomize` (offline rendering of deploy/kubernetes).
#   systemd-analyze Debian's systemd package, when missing (`verify` of deploy/systemd; no systemd
#                   needs to run).
#   pgbouncer       Debian's pgbouncer, for the tests that run a private one in front of the
#                   PostgreSQL above (testkit PrivatePgBouncer): no shared pgbouncer is run. Where an
#                   init system lets the package start its own (/etc/pgbouncer, port 6432) on
#                   installing, that one is stopped and disabled at once.
#   podman          Debian's podman with runc (crun fails on these machines' cgroups) and mmdebstrap,
#                   for the container image's test (dist/ ImageIT, scripts/image.sh), with the
#                   settings podman needs here in /etc/containers/containers.conf.d/50-outbox-relay.conf
#                   (a drop-in: the machine's own containers.conf is left as it is): runc with the
#                   cgroupfs manager, and no default ulimits (raising nofile is refused). Storage
#                   stays podman's default (overlay, native on these kernels).
#   writing examples the toolchains of examples/ (relay/daemon WritingExamplesIT): Debian's
#                   python3-psycopg (for /usr/bin/python3), golang-go and golang-github-jackc-pgx-v4-dev
#                   (Go builds them in GOPATH mode from /usr/share/gocode, no module download), npm
#                   when missing, and `npm ci` of examples/node (pg, into examples/node/node_modules);
#                   a first build of examples/go fills Go's build cache.
#
# State lives in .run/ at the repository root (git-ignored). `env` honours variables that are
# already set, so tests can be pointed elsewhere; `up` always manages the local services above.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN="$ROOT/.run"
HOST=127.0.0.1

PG_PORT=${OUTBOX_SERVICES_PG_PORT:-25432}
PG_STARTED="$RUN/postgres.started"   # holds the data directory when `up` started the cluster

KAFKA_PORT=9092
KAFKA_CONTROLLER_PORT=9093
KAFKA_DIR="$RUN/kafka"
KAFKA_LIB="$KAFKA_DIR/lib"
KAFKA_PID="$KAFKA_DIR/kafka.pid"
KAFKA_LOG="$KAFKA_DIR/kafka.log"
KAFKA_POM="$ROOT/scripts/kafka/pom.xml"

RABBIT_PORT=5672
RABBIT_STARTED="$RUN/rabbitmq.started"

NATS_PORT=${OUTBOX_SERVICES_NATS_PORT:-24222}
NATS_DIR="$RUN/nats"
NATS_PID="$NATS_DIR/nats.pid"

CONNECT_DIR="$RUN/connect"
CONNECT_LIB="$CONNECT_DIR/lib"
CONNECT_POM="$ROOT/scripts/connect/pom.xml"
CONNECT_PORTS=${OUTBOX_CONNECT_PORTS:-"8083 8084"}
CONNECT_PLUGINS=${OUTBOX_CONNECT_PLUGIN_PATH:-"$ROOT/connect/target/plugin"}
CONNECT_TIMEOUT=${OUTBOX_CONNECT_TIMEOUT:-300}

REDIS_PORT=${OUTBOX_SERVICES_REDIS_PORT:-26379}
REDIS_DIR="$RUN/redis"
REDIS_PID="$REDIS_DIR/redis.pid"

PG_TIMEOUT=${OUTBOX_PG_TIMEOUT:-60}
KAFKA_TIMEOUT=${OUTBOX_KAFKA_TIMEOUT:-90}
RABBIT_TIMEOUT=${OUTBOX_RABBITMQ_TIMEOUT:-120}

log() { printf 'services: %s\n' "$*" >&2; }
die() {
  printf 'services: ERROR: %s\n' "$*" >&2
  exit 1
}

# True when something accepts TCP connections on 127.0.0.1:$1.
port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/$HOST/$1" 2>/dev/null; }

# wait_for NAME TIMEOUT_S LOGFILE CHECK...: polls CHECK every 0.25 s; on timeout fails naming the
# service and its log.
wait_for() {
  local name=$1 limit=$2 logfile=$3
  shift 3
  local deadline=$((SECONDS + limit))
  until "$@"; do
    if ((SECONDS >= deadline)); then
      die "$name did not become ready within ${limit}s; see its log: $logfile"
    fi
    sleep 0.25
  done
}

apt_install() {
  command -v apt-get >/dev/null || die "$1 is not installed and apt-get is not available"
  log "installing $* with apt-get"
  # The package scripts may start the service or not (there may be no init system); callers check
  # the port afterwards and start it themselves.
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2 9>&-
}

# ---------------------------------------------------------------------------------------------
# PostgreSQL

# The newest installed server's binaries (Debian: /usr/lib/postgresql/<version>/bin).
pg_bin() {
  find /usr/lib/postgresql -mindepth 3 -maxdepth 3 -path '*/bin/initdb' -printf '%h\n' 2>/dev/null |
    sort -V | tail -n 1
}

# PostgreSQL refuses to run as root: as root, the cluster belongs to the postgres OS user.
as_pg() {
  if [[ $EUID -eq 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# The cluster's directory: .run/postgres, or, when the postgres OS user cannot reach the checkout
# (a clone under /root, say), a directory of this checkout's own under /var/tmp.
pg_dir() {
  if [[ $EUID -ne 0 ]] || runuser -u postgres -- test -x "$RUN" 2>/dev/null; then
    echo "$RUN/postgres"
  else
    echo "/var/tmp/outbox-relay-postgres-$(printf '%s' "$ROOT" | sha1sum | cut -c1-12)"
  fi
}

# Runs psql as the superuser over TCP (the private cluster trusts 127.0.0.1).
pg_admin() {
  psql -X -q -v ON_ERROR_STOP=1 -h "$HOST" -p "$PG_PORT" -U postgres -d postgres -Atc "$1"
}

pg_ready() { pg_isready -q -h "$HOST" -p "$PG_PORT" -t 2; }

pg_setting() { pg_admin "SELECT setting FROM pg_settings WHERE name = '$1'"; }

# A cluster of our own, made with initdb under pg_dir on PG_PORT, trust auth on 127.0.0.1 only,
# logical decoding on. The machine's own clusters are never touched.
pg_up() {
  if [[ -z "$(pg_bin)" ]] || ! command -v psql >/dev/null; then
    apt_install postgresql
  fi
  local bin dir data
  bin=$(pg_bin)
  [[ -n "$bin" ]] || die "postgresql: no initdb under /usr/lib/postgresql/*/bin after installing the package"
  dir=$(pg_dir)
  data="$dir/data"
  if pg_ready; then
    [[ "$(pg_setting wal_level 2>/dev/null)" == logical ]] ||
      die "a PostgreSQL without wal_level=logical answers on $HOST:$PG_PORT; stop it or set OUTBOX_SERVICES_PG_PORT to a free port"
    return
  fi
  mkdir -p "$dir"
  [[ $EUID -eq 0 ]] && chown postgres: "$dir"
  if [[ ! -f "$data/PG_VERSION" ]]; then
    log "postgresql: creating a cluster of our own in $data (trust auth on $HOST:$PG_PORT)"
    as_pg "$bin/initdb" -D "$data" -U postgres -A trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
      die "postgresql: initdb failed; see $dir/initdb.log"
    as_pg tee -a "$data/postgresql.conf" >/dev/null <<CONF
# scripts/services.sh: a throwaway cluster for the tests and the demo
listen_addresses = '$HOST'
port = $PG_PORT
unix_socket_directories = ''
wal_level = logical
max_replication_slots = 20
max_wal_senders = 20
max_connections = 200
CONF
  fi
  log "postgresql: starting the cluster in $data on $HOST:$PG_PORT"
  as_pg "$bin/pg_ctl" -D "$data" -l "$dir/postgres.log" -w -t "$PG_TIMEOUT" start >&2 9>&- ||
    die "postgresql: the cluster did not start; see $dir/postgres.log"
  echo "$data" >"$PG_STARTED"
  wait_for "PostgreSQL" "$PG_TIMEOUT" "$dir/postgres.log" pg_ready
}

pg_down() {
  if [[ -f "$PG_STARTED" ]]; then
    local data
    data=$(cat "$PG_STARTED")
    log "postgresql: stopping the cluster in $data"
    as_pg "$(pg_bin)/pg_ctl" -D "$data" -m fast -w stop >&2 9>&- || true
    rm -f "$PG_STARTED"
  else
    log "postgresql: left running (not started by services.sh)"
  fi
}

pg_status() {
  local who="pre-existing" wal=""
  [[ -f "$PG_STARTED" ]] && who="started by services.sh, $(cat "$PG_STARTED")"
  if pg_ready; then
    wal=$(pg_setting wal_level 2>/dev/null || echo "?")
    echo "postgresql: up   $HOST:$PG_PORT ($who, wal_level=$wal)"
  else
    echo "postgresql: down $HOST:$PG_PORT"
    return 1
  fi
}

# ---------------------------------------------------------------------------------------------
# Kafka

# fetch_jars NAME WHAT POM LIB LOGDIR: copies the runtime jars of POM into LIB once; the jar set is
# complete when LIB/.complete holds the hash of the pom that produced it. Offline first (a populated
# local repository needs no network), then from Maven Central.
fetch_jars() {
  local name=$1 what=$2 pom=$3 lib=$4 dir=$5 hash
  hash=$(sha256sum "$pom" | cut -d' ' -f1)
  if [[ -f "$lib/.complete" && "$(cat "$lib/.complete")" == "$hash" ]]; then
    return
  fi
  command -v mvn >/dev/null || die "$name: mvn is needed to fetch the $what jars from Maven Central"
  log "$name: fetching the $what jars into $lib (once)"
  rm -rf "$lib"
  mkdir -p "$lib"
  if ! mvn -B -o -Dstyle.color=never -f "$pom" dependency:copy-dependencies \
    -DoutputDirectory="$lib" >"$dir/fetch.log" 2>&1 9>&- &&
    ! mvn -B -Dstyle.color=never -f "$pom" dependency:copy-dependencies \
      -DoutputDirectory="$lib" >>"$dir/fetch.log" 2>&1 9>&-; then
    tail -n 40 "$dir/fetch.log" >&2
    die "$name: could not fetch the $what jars; see $dir/fetch.log"
  fi
  echo "$hash" >"$lib/.complete"
}

kafka_fetch() { fetch_jars kafka broker "$KAFKA_POM" "$KAFKA_LIB" "$KAFKA_DIR"; }

kafka_write_config() {
  cat >"$KAFKA_DIR/server.properties" <<EOF
# Written by scripts/services.sh at every start; edit the script, not this file.
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=$HOST:$KAFKA_CONTROLLER_PORT
controller.listener.names=CONTROLLER
listeners=PLAINTEXT://$HOST:$KAFKA_PORT,CONTROLLER://$HOST:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$HOST:$KAFKA_PORT
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$KAFKA_DIR/data
num.partitions=3
auto.create.topics.enable=true
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
min.insync.replicas=1
group.initial.rebalance.delay.ms=0
EOF
  cat >"$KAFKA_DIR/logback.xml" <<'EOF'
<configuration>
  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{36} - %msg%n</pattern></encoder>
  </appender>
  <!-- The full config dumps add two thousand lines per start. -->
  <logger name="org.apache.kafka.common.config.AbstractConfig" level="WARN"/>
  <root level="INFO"><appender-ref ref="OUT"/></root>
</configuration>
EOF
}

kafka_running_pid() {
  [[ -f "$KAFKA_PID" ]] || return 1
  local pid
  pid=$(cat "$KAFKA_PID")
  [[ -n "$pid" ]] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'kafka\.Kafka' || return 1
  echo "$pid"
}

kafka_ready() {
  local pid=$1
  kill -0 "$pid" 2>/dev/null ||
    die "kafka: the broker (pid $pid) exited while starting; see its log: $KAFKA_LOG"
  grep -q 'Kafka Server started' "$KAFKA_LOG" && port_open "$KAFKA_PORT"
}

kafka_up() {
  # The jars are fetched even when a broker already answers: tests start private brokers
  # (testkit PrivateKafka) from this checkout's $KAFKA_LIB.
  kafka_fetch
  if port_open "$KAFKA_PORT"; then
    return
  fi
  port_open "$KAFKA_CONTROLLER_PORT" &&
    die "kafka: port $KAFKA_CONTROLLER_PORT (controller) is taken by another process"
  kafka_write_config
  local java_opts=(-Dlogback.configurationFile="$KAFKA_DIR/logback.xml" -cp "$KAFKA_LIB/*")
  # A throwaway broker: fresh storage at every start, so topics of old runs never pile up.
  rm -rf "$KAFKA_DIR/data"
  log "kafka: formatting storage and starting the broker on $HOST:$KAFKA_PORT"
  java "${java_opts[@]}" kafka.tools.StorageTool format -t "$(kafka_cluster_id)" \
    -c "$KAFKA_DIR/server.properties" --standalone >"$KAFKA_LOG" 2>&1 ||
    die "kafka: formatting the storage failed; see its log: $KAFKA_LOG"
  # setsid: the broker outlives this script and ignores Ctrl-C in the terminal that ran it. For a
  # background simple command, $! is the java process itself (setsid and nohup exec it).
  (cd "$KAFKA_DIR" && exec setsid nohup java -Xms256m -Xmx768m "${java_opts[@]}" kafka.Kafka \
    "$KAFKA_DIR/server.properties" >>"$KAFKA_LOG" 2>&1 </dev/null 9>&-) &
  local pid=$!
  echo "$pid" >"$KAFKA_PID"
  wait_for "Kafka" "$KAFKA_TIMEOUT" "$KAFKA_LOG" kafka_ready "$pid"
}

# A cluster id as Kafka makes them: 16 random bytes, URL-safe base64 without padding, and (like
# Uuid.randomUuid) never starting with '-', which the command line would take for an option.
kafka_cluster_id() {
  local id
  id=-
  while [[ $id == -* ]]; do
    id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
  done
  echo "$id"
}

kafka_down() {
  local pid
  if pid=$(kafka_running_pid); then
    log "kafka: stopping the broker (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + 30))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.25; done
    if kill -0 "$pid" 2>/dev/null; then
      log "kafka: the broker did not stop within 30s; killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  else
    log "kafka: nothing to stop (not started by services.sh)"
  fi
  rm -f "$KAFKA_PID"
}

kafka_status() {
  local pid who="pre-existing"
  pid=$(kafka_running_pid) && who="started by services.sh, pid $pid"
  if port_open "$KAFKA_PORT"; then
    echo "kafka:      up   $HOST:$KAFKA_PORT ($who)"
  else
    echo "kafka:      down $HOST:$KAFKA_PORT"
    return 1
  fi
}

# ---------------------------------------------------------------------------------------------
# RabbitMQ

rabbit_logfile() { echo "/var/log/rabbitmq/rabbit@$(hostname -s).log"; }

rabbit_up() {
  if port_open "$RABBIT_PORT"; then
    return
  fi
  if ! command -v rabbitmq-server >/dev/null; then
    apt_install rabbitmq-server
    # The package may have started the node already.
    if port_open "$RABBIT_PORT"; then
      return
    fi
  fi
  log "rabbitmq: starting rabbitmq-server"
  # The Debian wrapper drops to the rabbitmq user when run as root.
  rabbitmq-server -detached >&2 9>&-
  touch "$RABBIT_STARTED"
  # Poll the AMQP port: `rabbitmqctl await_startup` needs the node's Erlang cookie and is slower.
  wait_for "RabbitMQ" "$RABBIT_TIMEOUT" "$(rabbit_logfile)" port_open "$RABBIT_PORT"
}

rabbit_down() {
  if [[ -f "$RABBIT_STARTED" ]]; then
    log "rabbitmq: stopping the node (started by services.sh)"
    rabbitmqctl stop >&2 || true
    rm -f "$RABBIT_STARTED"
  else
    log "rabbitmq: left running (not started by services.sh)"
  fi
}

rabbit_status() {
  local who="pre-existing"
  [[ -f "$RABBIT_STARTED" ]] && who="started by services.sh"
  if port_open "$RABBIT_PORT"; then
    echo "rabbitmq:   up   $HOST:$RABBIT_PORT ($who)"
  else
    echo "rabbitmq:   down $HOST:$RABBIT_PORT"
    return 1
  fi
}

# ---------------------------------------------------------------------------------------------
# NATS (JetStream) and Redis: Debian's packages, run as our own processes under .run/

# The executable $1 of Debian's package $2, installed when missing.
need_program() {
  local program=$1 package=$2 path
  path=$(command -v "$program" || true)
  [[ -z "$path" && -x "/usr/sbin/$program" ]] && path=/usr/sbin/$program
  if [[ -z "$path" ]]; then
    apt_install "$package"
    path=$(command -v "$program" || echo "/usr/sbin/$program")
  fi
  [[ -x "$path" ]] || die "$package: $program not found after installing the package"
  echo "$path"
}

# pid_alive PIDFILE: prints the pid when the process of PIDFILE still runs.
pid_alive() {
  [[ -f "$1" ]] || return 1
  local pid
  pid=$(cat "$1")
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# stop_pid NAME PIDFILE: SIGTERM, then SIGKILL after 30 s, for a process `up` started.
stop_pid() {
  local name=$1 pidfile=$2 pid
  if pid=$(pid_alive "$pidfile"); then
    log "$name: stopping (pid $pid, started by services.sh)"
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + 30))
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.25; done
    kill -KILL "$pid" 2>/dev/null || true
  else
    log "$name: left running (not started by services.sh)"
  fi
  rm -f "$pidfile"
}

# start_server NAME PORT PIDFILE PROGRAM PACKAGE LOGFILE ARGS...: when nothing answers on PORT,
# starts PROGRAM (installing PACKAGE if missing) detached with ARGS and waits for the port.
start_server() {
  local name=$1 port=$2 pidfile=$3 program=$4 package=$5 logfile=$6 bin
  shift 6
  port_open "$port" && return
  bin=$(need_program "$program" "$package")
  port_open "$port" && return # the package may have started its own server
  mkdir -p "$(dirname "$pidfile")"
  log "$name: starting $program on $HOST:$port"
  (exec setsid nohup "$bin" "$@" </dev/null >>"${pidfile%.pid}.out" 2>&1 9>&-) &
  echo $! >"$pidfile"
  wait_for "$name" 30 "$logfile" port_open "$port"
}

nats_up() {
  mkdir -p "$NATS_DIR/jetstream"
  start_server nats "$NATS_PORT" "$NATS_PID" nats-server nats-server "$NATS_DIR/nats.log" \
    -a "$HOST" -p "$NATS_PORT" -js -sd "$NATS_DIR/jetstream" -l "$NATS_DIR/nats.log"
}

redis_up() {
  mkdir -p "$REDIS_DIR"
  start_server redis "$REDIS_PORT" "$REDIS_PID" redis-server redis-server "$REDIS_DIR/redis.log" \
    --bind "$HOST" --port "$REDIS_PORT" --dir "$REDIS_DIR" --save "" --appendonly no \
    --daemonize no --logfile "$REDIS_DIR/redis.log"
}

# one_status NAME PORT PIDFILE
one_status() {
  local name=$1 port=$2 pidfile=$3 who="pre-existing" pid
  pid=$(pid_alive "$pidfile") && who="started by services.sh, pid $pid"
  if port_open "$port"; then
    printf '%-11s up   %s:%s (%s)\n' "$name:" "$HOST" "$port" "$who"
  else
    printf '%-11s down %s:%s\n' "$name:" "$HOST" "$port"
    return 1
  fi
}

# ---------------------------------------------------------------------------------------------
# Tools for the tests of dist/ (not services: nothing is started)

TOOLS_DIR=/usr/local/lib/outbox-relay-tools

# apt-get update only when the package lists do not know the package yet (a clean machine).
apt_known() { apt-cache policy "$1" 2>/dev/null | grep -q 'Candidate: [0-9]'; }

apt_tool_install() {
  command -v apt-get >/dev/null || die "$1 is not installed and apt-get is not available"
  apt_known "$1" || DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  log "installing $1 with apt-get"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -o DPkg::Lock::Timeout=300 "$1" >&2 9>&-
}

# unpack_tool PROGRAM PACKAGE: /usr/bin/PROGRAM of Debian's PACKAGE, unpacked (apt-get download +
# dpkg-deb -x) into $TOOLS_DIR and linked into /usr/local/bin, without installing the package (its
# dependencies, services and configuration) when PROGRAM is missing.
unpack_tool() {
  local program=$1 package=$2 tmp
  command -v "$program" >/dev/null && return
  command -v apt-get >/dev/null || die "$program is not installed and apt-get is not available"
  apt_known "$package" || DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  log "unpacking $program from Debian's $package package into $TOOLS_DIR"
  tmp=$(mktemp -d)
  chmod 755 "$tmp" # apt-get download runs as _apt where it can
  (cd "$tmp" && apt-get download -qq "$package" >&2) || die "apt-get download $package failed"
  mkdir -p "$TOOLS_DIR"
  dpkg-deb -x "$tmp/${package}"_*.deb "$tmp/root"
  install -m 0755 "$tmp/root/usr/bin/$program" "$TOOLS_DIR/$program"
  rm -rf "$tmp"
  ln -sf "$TOOLS_DIR/$program" "/usr/local/bin/$program"
}

tools_up() {
  if ! command -v docker-compose >/dev/null; then
    apt_tool_install docker-compose
  fi
  unpack_tool promtool prometheus
  unpack_tool kubectl kubernetes-client
  if ! command -v systemd-analyze >/dev/null; then
    apt_tool_install systemd
  fi
  pgbouncer_tool
  podman_up
  writer_tools
}

# The toolchains of the writing examples (examples/), each installed once.
writer_tools() {
  local pkg
  for pkg in python3-psycopg golang-go golang-github-jackc-pgx-v4-dev; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' ||
      apt_tool_install "$pkg"
  done
  command -v npm >/dev/null || apt_tool_install npm
  if [[ ! -d "$ROOT/examples/node/node_modules/pg" ]]; then
    log "installing pg for examples/node with npm"
    (cd "$ROOT/examples/node" && npm ci --no-audit --no-fund --loglevel=error >&2 9>&-)
  fi
  # Fills Go's build cache with pgx once (~12 s), so that the test's build of examples/go is quick.
  GOPATH=/usr/share/gocode GO111MODULE=off go build -o /dev/null "$ROOT/examples/go/main.go" >&2 9>&-
}

# Debian's pgbouncer, installed but not run: tests start their own.
pgbouncer_tool() {
  if command -v pgbouncer >/dev/null || [[ -x /usr/sbin/pgbouncer ]]; then
    return
  fi
  apt_tool_install pgbouncer
  if [[ -d /run/systemd/system ]]; then
    systemctl disable --now pgbouncer.service >&2 9>&- || true
  elif [[ -x /etc/init.d/pgbouncer ]]; then
    invoke-rc.d pgbouncer stop >&2 9>&- || true
    update-rc.d pgbouncer disable >&2 || true
  fi
}

PODMAN_CONF=/etc/containers/containers.conf.d/50-outbox-relay.conf

# podman, runc and mmdebstrap (scripts/image.sh), and podman's settings for these machines.
podman_up() {
  local pkg missing=()
  for pkg in podman runc mmdebstrap; do
    command -v "$pkg" >/dev/null || [[ -x "/usr/sbin/$pkg" ]] || missing+=("$pkg")
  done
  if ((${#missing[@]})); then
    command -v apt-get >/dev/null || die "${missing[*]} not installed and apt-get is not available"
    apt_known podman || DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    log "installing ${missing[*]} with apt-get"
    # Without recommends: no crun (runc is the runtime here), no buildah, slirp4netns or
    # fuse-overlayfs (rootful podman with host networking and native overlay needs none of them).
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      -o DPkg::Lock::Timeout=300 "${missing[@]}" >&2 9>&-
  fi
  local conf
  conf=$(
    cat <<'CONF'
# Written by scripts/services.sh (outbox-relay): podman on these machines. Read after
# /etc/containers/containers.conf, whose other settings stay as they are.
[containers]
# The default raises nofile, which the sandbox refuses (runc: "error setting rlimits").
default_ulimits = []

[engine]
# crun refuses the hybrid cgroup v1/v2 mounts here; runc with cgroupfs (no systemd) works.
runtime = "runc"
cgroup_manager = "cgroupfs"
CONF
  )
  if [[ ! -f "$PODMAN_CONF" || "$(cat "$PODMAN_CONF")" != "$conf" ]]; then
    if [[ -w /etc/containers || $EUID -eq 0 ]]; then
      log "podman: writing $PODMAN_CONF (runc, cgroupfs, no default ulimits)"
      mkdir -p "$(dirname "$PODMAN_CONF")"
      printf '%s\n' "$conf" >"$PODMAN_CONF"
    else
      log "podman: cannot write $PODMAN_CONF (not root): the image's test may skip"
    fi
  fi
}

# ---------------------------------------------------------------------------------------------

print_env() {
  local name default
  while read -r name default; do
    printf 'export %s=%q\n' "$name" "${!name-$default}"
  done <<EOF
OUTBOX_PG_HOST $HOST
OUTBOX_PG_PORT $PG_PORT
OUTBOX_PG_USER postgres
OUTBOX_PG_PASSWORD
OUTBOX_KAFKA_BOOTSTRAP $HOST:$KAFKA_PORT
OUTBOX_RABBITMQ_URI amqp://guest:guest@$HOST:$RABBIT_PORT/%2f
OUTBOX_NATS_URL nats://$HOST:$NATS_PORT
OUTBOX_REDIS_URI redis://$HOST:$REDIS_PORT
EOF
}

# ---------------------------------------------------------------------------------------------
# Kafka Connect (only `connect up`): two distributed workers for the connector of connect/

connect_fetch() { fetch_jars connect worker "$CONNECT_POM" "$CONNECT_LIB" "$CONNECT_DIR"; }

connect_write_config() {
  local port=$1
  cat >"$CONNECT_DIR/worker-$port.properties" <<EOF
# Written by scripts/services.sh at every start; edit the script, not this file.
bootstrap.servers=$HOST:$KAFKA_PORT
group.id=outbox-relay-connect
listeners=http://$HOST:$port
rest.advertised.host.name=$HOST
rest.advertised.port=$port
config.storage.topic=outbox-relay-connect-configs
offset.storage.topic=outbox-relay-connect-offsets
status.storage.topic=outbox-relay-connect-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
# The outbox wire format: key = aggregate_id (UTF-8), value = the payload bytes, string headers.
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.converters.ByteArrayConverter
header.converter=org.apache.kafka.connect.storage.StringConverter
plugin.path=$CONNECT_PLUGINS
# Every plug-in (the connector's jar included) has ServiceLoader manifests: the default
# (hybrid_warn) scans every class by reflection as well, ~9 s of each start on the test machine.
plugin.discovery=service_load
exactly.once.source.support=enabled
offset.flush.interval.ms=1000
# A dead worker's tasks move after this (the default, 5 minutes, is for rolling restarts).
scheduled.rebalance.max.delay.ms=5000
session.timeout.ms=6000
heartbeat.interval.ms=2000
EOF
  cat >"$CONNECT_DIR/logback.xml" <<'EOF'
<configuration>
  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{36} - %msg%n</pattern></encoder>
  </appender>
  <logger name="org.apache.kafka.common.config.AbstractConfig" level="WARN"/>
  <logger name="org.apache.kafka.clients" level="WARN"/>
  <root level="INFO"><appender-ref ref="OUT"/></root>
</configuration>
EOF
}

connect_ready() {
  local pid=$1 port=$2
  kill -0 "$pid" 2>/dev/null ||
    die "connect: the worker on port $port (pid $pid) exited while starting; see $CONNECT_DIR/worker-$port.log"
  curl -fsS "http://$HOST:$port/connectors" >/dev/null 2>&1
}

connect_up() {
  [[ -d "$CONNECT_PLUGINS" ]] ||
    die "connect: no plug-in at $CONNECT_PLUGINS; build it: mvn -B -q package -DskipTests -pl connect -am"
  port_open "$KAFKA_PORT" || die "connect: Kafka does not answer on $HOST:$KAFKA_PORT; run: $0 up"
  mkdir -p "$CONNECT_DIR"
  connect_fetch
  local port pid
  for port in $CONNECT_PORTS; do
    if pid_alive "$CONNECT_DIR/worker-$port.pid" >/dev/null; then
      continue
    fi
    port_open "$port" && die "connect: port $port is taken by another process"
    connect_write_config "$port"
    log "connect: starting a worker on $HOST:$port"
    (cd "$CONNECT_DIR" && exec setsid nohup java -Xms128m -Xmx512m \
      -Dlogback.configurationFile="$CONNECT_DIR/logback.xml" -cp "$CONNECT_LIB/*" \
      org.apache.kafka.connect.cli.ConnectDistributed "$CONNECT_DIR/worker-$port.properties" \
      >"$CONNECT_DIR/worker-$port.log" 2>&1 </dev/null 9>&-) &
    echo "$!" >"$CONNECT_DIR/worker-$port.pid"
  done
  for port in $CONNECT_PORTS; do
    pid=$(cat "$CONNECT_DIR/worker-$port.pid")
    wait_for "Connect worker $port" "$CONNECT_TIMEOUT" "$CONNECT_DIR/worker-$port.log" \
      connect_ready "$pid" "$port"
  done
  log "connect: workers up on $(for p in $CONNECT_PORTS; do printf '%s:%s ' "$HOST" "$p"; done)"
}

connect_down() {
  local port
  for port in $CONNECT_PORTS; do
    if [[ -f "$CONNECT_DIR/worker-$port.pid" ]]; then
      stop_pid "connect worker $port" "$CONNECT_DIR/worker-$port.pid"
    fi
  done
}

connect_status() {
  local port rc=0
  for port in $CONNECT_PORTS; do
    if curl -fsS "http://$HOST:$port/" >/dev/null 2>&1; then
      echo "connect:    up   $HOST:$port"
    else
      echo "connect:    down $HOST:$port"
      rc=3
    fi
  done
  return "$rc"
}

# Serialises up/down of concurrent callers (several engineers share one machine and .run/).
with_lock() {
  mkdir -p "$RUN"
  exec 9>"$RUN/services.lock"
  if ! flock -n 9; then
    log "waiting for another services.sh (lock $RUN/services.lock)"
    flock -w 300 9 || die "another services.sh has held $RUN/services.lock for 5 minutes"
  fi
  "$@"
}

cmd_up() {
  local t0=$SECONDS
  pg_up
  rabbit_up
  kafka_up
  nats_up
  redis_up
  tools_up
  log "postgresql, kafka, rabbitmq, nats and redis are up ($((SECONDS - t0))s)"
}

cmd_down() {
  connect_down
  stop_pid redis "$REDIS_PID"
  stop_pid nats "$NATS_PID"
  kafka_down
  rabbit_down
  pg_down
}

cmd_status() {
  local rc=0
  pg_status || rc=3
  kafka_status || rc=3
  rabbit_status || rc=3
  one_status nats "$NATS_PORT" "$NATS_PID" || rc=3
  one_status redis "$REDIS_PORT" "$REDIS_PID" || rc=3
  return "$rc"
}

case "${1:-}" in
  up) with_lock cmd_up ;;
  down) with_lock cmd_down ;;
  status) cmd_status ;;
  env) print_env ;;
  connect)
    case "${2:-}" in
      up) with_lock connect_up ;;
      down) with_lock connect_down ;;
      status) connect_status ;;
      fetch) mkdir -p "$CONNECT_DIR" && with_lock connect_fetch && echo "$CONNECT_LIB" ;;
      *)
        echo "usage: $0 connect up|down|status|fetch" >&2
        exit 2
        ;;
    esac
    ;;
  *)
    echo "usage: $0 up|down|status|env|connect up|down|status|fetch" >&2
    exit 2
    ;;
esac
