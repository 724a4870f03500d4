/**
 * Minimal structural shapes the capture modules operate on. They describe only
 * what gating reads, so any richer Event or field_spec type (the envelope
 * model, a zod-inferred payload) is assignable without conversion.
 */
import type { CaptureLevel } from '../core/capture-levels.js';

/**
 * The envelope members down-leveling reads or rewrites (AEP-0001 §5.1):
 * `type` selects the payload annotations, `capture` is the claim being
 * lowered, `agent`/`subject` feed metadata synthesis, `data` is pruned. Every
 * other envelope member passes through untouched.
 */
export type CaptureEvent = {
  type: string;
  capture?: CaptureLevel;
  agent: string;
  subject?: string;
  data?: Record<string, unknown>;
  [k: string]: unknown;
};

/** One `choices[]` entry of a select field (AEP-0002 §5.2 field_spec). */
export type FormChoice = {
  id: string;
  label?: string;
};

/**
 * One `field_spec` of a `kind: "form"` request (AEP-0002 §5.2, AEP-0006): the
 * field's `type` (and, for selects, its `choices`/`other`) decides whether its
 * answer is structural or user-authored text.
 */
export type FormFieldSpec = {
  id: string;
  type: string;
  label?: string;
  required?: boolean;
  multi?: boolean;
  other?: boolean;
  choices?: readonly FormChoice[];
  min?: number;
  max?: number;
};
