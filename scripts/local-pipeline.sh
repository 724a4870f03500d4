#!/usr/bin/env bash
# The collector + Jaeger pipeline without Docker: builds those two once (scripts/provision-otel.sh otelcol jaeger,
# cached under ~/.cache/hermes-aep; cold it needs Go >= 1.25 and the Go module proxy, and costs about 2 GB of module
# downloads and several GB of Go build cache: docs/local-pipeline.md), then runs them on loopback in the foreground
# until Ctrl-C (warm: ready in a few seconds).
#   Jaeger:     query API on http://127.0.0.1:16686 (a locally built Jaeger has the JSON APIs, not the web UI)
#   collector:  OTLP on 127.0.0.1:4317 (gRPC) and 127.0.0.1:4318 (HTTP), the shipped otel-collector.yaml
# Point the daemon at it:  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 hermes-aep daemon
# Spans the daemon wrote to its file while no collector ran ({AEP_LOG_DIR}/otel/spans.jsonl) are replayed into
# Jaeger at start (the collector's otlp_json_file receiver).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bins="$(bash "$ROOT/scripts/provision-otel.sh" otelcol jaeger)"
OTELCOL="$(printf '%s\n' "$bins" | sed -n 's/^OTELCOL=//p')"
JAEGER="$(printf '%s\n' "$bins" | sed -n 's/^JAEGER=//p')"
LOG_DIR="${AEP_LOG_DIR:-$HOME/.aep/logs}"

pids=()
stop() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap stop EXIT INT TERM

JAEGER_LISTEN_HOST=127.0.0.1 JAEGER_METRICS_LEVEL=none JAEGER_QUERY_ENABLE_TRACING=false \
  "$JAEGER" --config "file:$ROOT/test/e2e/jaeger-config.yaml" &
pids+=($!)
OTELCOL_OTLP_GRPC_ENDPOINT=127.0.0.1:4317 OTELCOL_OTLP_HTTP_ENDPOINT=127.0.0.1:4318 \
OTELCOL_HEALTH_ENDPOINT=127.0.0.1:13133 OTELCOL_JAEGER_ENDPOINT=127.0.0.1:14317 \
OTELCOL_METRICS_LEVEL=none OTELCOL_DEBUG_VERBOSITY=basic OTELCOL_REPLAY_GLOB="$LOG_DIR/otel/*.jsonl" \
  "$OTELCOL" --config "$ROOT/otel-collector.yaml" &
pids+=($!)
echo "local-pipeline: Jaeger query on http://127.0.0.1:16686, collector OTLP/HTTP on http://127.0.0.1:4318 (Ctrl-C stops both)" >&2
wait -n "${pids[@]}"
