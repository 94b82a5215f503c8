#!/usr/bin/env bash
# Fetch the QuestDB server jar (org.questdb:questdb) from Maven Central: the local runtime's install
# recipe, run by scripts/install.sh questdb (or the local runtime) with QUESTDB_VERSION from
# definition.py.
#
#   -> $TSBENCH_OPT/questdb/questdb-$QUESTDB_VERSION.jar   (~30 MB; runs on Java 17)
#
# Run (verified):
#   java -Xms256m -Xmx2g -p questdb-$QUESTDB_VERSION.jar -m io.questdb/io.questdb.ServerMain -d <root>
# <root>/conf/server.conf keys that move every listener off the defaults
# (QuestDB writes a default server.conf only when none exists, so write ours first):
#   http.net.bind.to=127.0.0.1:<port>        REST /exec + ILP over HTTP /write, /ping   (default 9000)
#   http.min.net.bind.to=127.0.0.1:<port>    "min" health server, GET /status           (default 9003)
#   pg.net.bind.to=127.0.0.1:<port>          PostgreSQL wire, user admin / quest, db qdb (default 8812)
#   line.tcp.net.bind.to=127.0.0.1:<port>    ILP over TCP                                (default 9009)
#   line.udp.enabled=false                   ILP over UDP (already off by default in 9.x)
#   telemetry.enabled=false                  no outbound telemetry attempts
# Readiness: GET http://127.0.0.1:<http>/exec?query=select%201 -> 200 (~3 s); /ping -> 204.
# Stop: SIGTERM ("QuestDB is shutdown." in stdout, well under a second).
#
# Idempotent: skips when the jar is already in place.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../../scripts/lib.sh"
: "${QUESTDB_VERSION:?from targets/questdb/definition.py: run scripts/install.sh questdb}"

GAV="org.questdb:questdb:$QUESTDB_VERSION"
DEST_DIR="$TSBENCH_OPT/questdb"
JAR="$DEST_DIR/questdb-$QUESTDB_VERSION.jar"
M2_REPO="${M2_REPO:-$HOME/.m2/repository}"
M2_JAR="$M2_REPO/org/questdb/questdb/$QUESTDB_VERSION/questdb-$QUESTDB_VERSION.jar"
CENTRAL_URL="https://repo1.maven.org/maven2/org/questdb/questdb/$QUESTDB_VERSION/questdb-$QUESTDB_VERSION.jar"

# Full CRC test of a jar (~1 s); the installed jar only gets the cheap listing check.
jar_ok() { [[ -s "$1" ]] && unzip -tq "$1" >/dev/null 2>&1; }

if [[ -s "$JAR" ]] && unzip -l "$JAR" io/questdb/ServerMain.class >/dev/null 2>&1; then
    log "questdb $QUESTDB_VERSION already installed: $JAR"
    echo "$JAR"
    exit 0
fi

command -v java >/dev/null || die "java (17+) is not on PATH"
apt_install unzip
mkdir -p "$DEST_DIR"

if ! jar_ok "$M2_JAR"; then
    if command -v mvn >/dev/null; then
        log "mvn dependency:get $GAV"
        mvn -q -B dependency:get -Dartifact="$GAV" -Dtransitive=false \
            -Dmaven.repo.local="$M2_REPO" >&2 || log "mvn failed; falling back to curl"
    fi
fi

tmp="$JAR.part"
if jar_ok "$M2_JAR"; then
    cp "$M2_JAR" "$tmp"
else
    log "curl $CENTRAL_URL"
    curl -fsSL --retry 3 -o "$tmp" "$CENTRAL_URL"
    curl -fsSL --retry 3 -o "$tmp.sha1" "$CENTRAL_URL.sha1"
    echo "$(head -c 40 "$tmp.sha1")  $tmp" | sha1sum -c --quiet - || die "sha1 mismatch for $CENTRAL_URL"
    rm -f "$tmp.sha1"
fi
jar_ok "$tmp" || die "downloaded QuestDB jar is not a valid zip: $tmp"
mv -f "$tmp" "$JAR"
log "questdb $QUESTDB_VERSION installed: $JAR"
echo "$JAR"
