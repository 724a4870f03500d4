export { AepLogSink, type LogSinkOptions } from './log-sink.js';
export { loadLogsConfig, type LogsConfig } from './logs-config.js';
export { CountingLogExporter, DeferredLogExporter, otlpLogExporter } from './log-exporter.js';
export { toLogRecord, type AepLogRecord, type BridgeEvent } from './log-record.js';
