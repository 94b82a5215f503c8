#!/usr/bin/env bash
# The local runtime's install recipe (scripts/install.sh iotdb, or the local runtime): IoTDB's
# ConfigNode and DataNode jars with their dependencies from Maven Central, at IOTDB_VERSION
# (definition.py's pin), and tsbench's loopback-bind library (runtimes/native/loopback_bind.c) beside them.
#
#   -> $TSBENCH_OPT/iotdb/<version>/lib/*.jar              (~165 jars, ~110 MB; Java 17)
#      $TSBENCH_OPT/iotdb/<version>/VERSION                 (the version the server jar declares)
#      $TSBENCH_OPT/iotdb/<version>/tsbench-loopback-bind-<sha12>.so   (LD_PRELOAD of run.sh)
#
# Recipe: `mvn dependency:copy-dependencies` of a two-dependency POM (org.apache.iotdb:iotdb-server
# and iotdb-confignode); the jars are what upstream's binary distribution puts in lib/ (its start
# scripts add nothing but the JVM options run.sh passes). Idempotent: skips when VERSION exists
# (IOTDB_REINSTALL=1 installs again); the library is compiled again when its source changed. One
# install per machine at a time: the second waits.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../../scripts/lib.sh"

: "${IOTDB_VERSION:?from targets/iotdb/definition.py: run scripts/install.sh iotdb}"
FOLDER="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VERSION_DIR="$TSBENCH_OPT/iotdb/$IOTDB_VERSION"
MARKER="$VERSION_DIR/VERSION" # written last: its presence means a finished install
SHIM_COMPILER="$FOLDER/../../../../scripts/compile_loopback_shim.sh"

# Done when the marker exists (the library is compiled again if its source changed).
exit_if_installed() {
    if [[ -s "$MARKER" && -z "${IOTDB_REINSTALL:-}" ]]; then
        bash "$SHIM_COMPILER" "$VERSION_DIR" >/dev/null
        log "iotdb $IOTDB_VERSION ${1:-already} installed: $VERSION_DIR"
        echo "$VERSION_DIR"
        exit 0
    fi
}
exit_if_installed
mkdir -p "$TSBENCH_OPT"
exec 9>"$TSBENCH_OPT/iotdb-$IOTDB_VERSION.lock"
flock 9
exit_if_installed "meanwhile"
command -v java >/dev/null || die "java (17+) is not on PATH (needed to run iotdb $IOTDB_VERSION)"
command -v mvn >/dev/null || apt_install maven
work="$TSBENCH_OPT/build/iotdb-$IOTDB_VERSION"
rm -rf "$work" "$VERSION_DIR"
mkdir -p "$work/lib" "$VERSION_DIR"
cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>tsbench</groupId><artifactId>iotdb-server-jars</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.apache.iotdb</groupId><artifactId>iotdb-server</artifactId><version>$IOTDB_VERSION</version></dependency>
    <dependency><groupId>org.apache.iotdb</groupId><artifactId>iotdb-confignode</artifactId><version>$IOTDB_VERSION</version></dependency>
  </dependencies>
</project>
POM
log "mvn dependency:copy-dependencies org.apache.iotdb:iotdb-server,iotdb-confignode:$IOTDB_VERSION"
if ! mvn -q -B -f "$work/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$work/lib" >"$work/mvn.log" 2>&1; then
    tail -n 20 "$work/mvn.log" >&2
    die "iotdb $IOTDB_VERSION: its jars did not resolve from Maven Central (full output: $work/mvn.log)"
fi
server_jar="$work/lib/iotdb-server-$IOTDB_VERSION.jar"
declared="$(unzip -p "$server_jar" META-INF/maven/org.apache.iotdb/iotdb-server/pom.properties \
    | sed -n 's/^version=//p')"
[[ "$declared" == "$IOTDB_VERSION" ]] || die "iotdb: $server_jar declares version '$declared'"
bash "$SHIM_COMPILER" "$VERSION_DIR" >/dev/null
# Install by rename, the marker last: an interrupted install is never taken for a finished one.
mv "$work/lib" "$VERSION_DIR/lib"
echo "$declared" >"$MARKER.part" && mv "$MARKER.part" "$MARKER"
log "iotdb installed: $VERSION_DIR ($(find "$VERSION_DIR/lib" -name '*.jar' | wc -l) jars, $(du -sh "$VERSION_DIR" | cut -f1))"
echo "$VERSION_DIR"
