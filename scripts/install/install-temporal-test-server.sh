#!/usr/bin/env bash
# Installs Temporal's time-skipping test server (the one `startTestStack({ timeSkipping: true })` runs) into a cache
# outside the repo and prints the path of its launcher on the last line of stdout. The SDK downloads a native build from
# temporal.download, which is not reachable everywhere; Maven Central serves the same server as a Java artifact
# (io.temporal:temporal-test-server), so this fetches it with Maven and writes a launcher that runs it with `java`.
# Needs java (17+) and mvn. A cached launcher whose jars are all there is reused.
set -euo pipefail

VERSION="1.38.0" # io.temporal:temporal-test-server on Maven Central
CACHE_ROOT="${AGENT_FOLLOWUP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-followup}"
DEST="$CACHE_ROOT/temporal-test-server-$VERSION"
LAUNCHER="$DEST/temporal-test-server"

log() { echo "install-temporal-test-server: $*" >&2; }

# slf4j-nop: without a binding the server prints three SLF4J lines on every start (a passing test prints nothing).
if [ -x "$LAUNCHER" ] && [ -f "$DEST/complete" ] && compgen -G "$DEST/lib/slf4j-nop-*.jar" >/dev/null; then
  log "using cached $LAUNCHER"
  echo "$LAUNCHER"
  exit 0
fi

for tool in java mvn; do
  command -v "$tool" >/dev/null 2>&1 || { log "$tool is not installed: the time-skipping test server needs java and mvn"; exit 1; }
done

start=$(date +%s)
rm -rf "$DEST"
mkdir -p "$DEST/lib"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>agent-followup</groupId><artifactId>temporal-test-server-fetch</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-nop</artifactId><version>1.7.36</version></dependency>
  </dependencies>
</project>
POM
log "fetching io.temporal:temporal-test-server:$VERSION and its dependencies from Maven Central (first time only)"
mvn -q -B -f "$work/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$DEST/lib" >&2
cat >"$LAUNCHER" <<LAUNCH
#!/usr/bin/env bash
# Temporal's time-skipping test server $VERSION (Java build from Maven Central); arguments as the native build takes them.
exec java -cp "$DEST/lib/*" io.temporal.testserver.TestServer "\$@"
LAUNCH
chmod +x "$LAUNCHER"
touch "$DEST/complete"
log "installed in $(( $(date +%s) - start ))s ($(ls "$DEST/lib" | wc -l) jars)"
echo "$LAUNCHER"
