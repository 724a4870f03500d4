/**
 * Public surface of the capture layer: levels, canonical digests, the §9.4
 * redaction pipeline, payload annotations and down-leveling. Named exports
 * only, so the API is reviewable in one place.
 */
export { CAPTURE_LEVELS, DEFAULT_CAPTURE, captureRank, minCapture, isCaptureLevel, type CaptureLevel } from './levels.js';
export { canonicalJson, contentDigest } from './canonical-json.js';
export { PII_MARKER, SECRET_MARKER, isCredentialKey, redactText, redactValue, type RedactOptions } from './redact.js';
export { annotatedTypes, annotationsFor, type AnnotationNode } from './annotations.js';
export { downlevel, gateFormValues, synthesizePrompt } from './downlevel.js';
export type { CaptureEvent, FormChoice, FormFieldSpec } from './types.js';
