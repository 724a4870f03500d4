import { execFileSync } from 'node:child_process';

/**
 * Deliveries as Hermes's outbound webhooks make them, built and signed by
 * python3 itself (json, hmac, hashlib, uuid, datetime), never by the daemon's
 * code: the body is `json.dumps(payload, ensure_ascii=False, default=str)`
 * (default separators) in the key order of agent/outbound_webhooks.py at
 * NousResearch/hermes-agent 1fda2280 (hook_event_name, profile, tool_name,
 * tool_input, session_id, cwd, extra, delivery_id, timestamp), the
 * timestamp `datetime.now(timezone.utc).isoformat()` with `+00:00` as `Z`,
 * the id `uuid4().hex`, the signature the hex HMAC-SHA256 of the body bytes.
 */
const SIGNER = `
import datetime, hashlib, hmac, json, sys, uuid, base64
jobs = json.load(sys.stdin)
out = []
for j in jobs:
    env = j["envelope"]
    payload = {"hook_event_name": env["hook_event_name"], "profile": j.get("profile", "default")}
    for k in ("tool_name", "tool_input", "session_id", "cwd", "extra"):
        payload[k] = env.get(k)
    payload["delivery_id"] = j.get("delivery_id") or uuid.uuid4().hex
    now = datetime.datetime.now(tz=datetime.timezone.utc) + datetime.timedelta(seconds=j.get("offset_s", 0))
    payload["timestamp"] = now.isoformat().replace("+00:00", "Z")
    body = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
    sig = hmac.new(j["secret"].encode("utf-8"), body, hashlib.sha256).hexdigest()
    out.append({"body": base64.b64encode(body).decode(), "signature": "sha256=" + sig, "delivery_id": payload["delivery_id"], "event": env["hook_event_name"]})
json.dump(out, sys.stdout)
`;

export interface DeliveryJob {
  readonly envelope: Record<string, unknown>;
  readonly secret: string;
  /** seconds added to now for the timestamp (a stale delivery: -600) */
  readonly offsetS?: number;
  /** a fixed delivery id (default: a fresh uuid4 hex) */
  readonly deliveryId?: string;
}

export interface Delivery {
  readonly body: Buffer;
  readonly signature: string;
  readonly deliveryId: string;
  readonly event: string;
  /** the request headers Hermes sends (Host is the client's own) */
  readonly headers: Record<string, string | number>;
}

/** Build and sign deliveries with python3 (one process for the batch). */
export function pythonDeliveries(jobs: readonly DeliveryJob[]): Delivery[] {
  const input = JSON.stringify(
    jobs.map((j) => ({ envelope: j.envelope, secret: j.secret, offset_s: j.offsetS ?? 0, ...(j.deliveryId ? { delivery_id: j.deliveryId } : {}) })),
  );
  const out = JSON.parse(execFileSync('python3', ['-c', SIGNER], { input, encoding: 'utf8' })) as {
    body: string;
    signature: string;
    delivery_id: string;
    event: string;
  }[];
  return out.map((d) => {
    const body = Buffer.from(d.body, 'base64');
    return {
      body,
      signature: d.signature,
      deliveryId: d.delivery_id,
      event: d.event,
      headers: {
        'content-type': 'application/json',
        'content-length': body.length,
        'user-agent': 'Hermes-Agent-Outbound-Webhook',
        'x-hermes-event': d.event,
        'x-hermes-delivery': d.delivery_id,
        'x-hermes-signature-256': d.signature,
      },
    };
  });
}

/** `openssl dgst -sha256 -hmac <secret>` of `body`: the hex digest, a second independent signer. */
export function opensslHmac(secret: string, body: Buffer): string {
  const out = execFileSync('openssl', ['dgst', '-sha256', '-hmac', secret], { input: body, encoding: 'utf8' });
  return /([0-9a-f]{64})\s*$/.exec(out.trim())![1]!;
}
