/**
 * Which genai-prices provider prices a call Hermes made, from Hermes's
 * provider name (hermes_cli/auth.py PROVIDER_REGISTRY plus `openrouter` and
 * `custom`, Hermes 0.18.2) and the call's base URL.
 *
 * The table is explicit on purpose: genai-prices' own provider lookup matches
 * by substring (`openai-codex` would find `openai`, a ChatGPT subscription
 * priced at API rates), so a Hermes name is only ever looked up here.
 *
 * | Hermes provider | genai-prices provider |
 * | --- | --- |
 * | `anthropic` | `anthropic` |
 * | `openai`, `openai-api` | `openai` |
 * | `openrouter` | `openrouter` |
 * | `gemini`, `vertex` | `google` (Hermes prices Vertex as Gemini too) |
 * | `bedrock` | `aws` |
 * | `azure-foundry` | `azure` |
 * | `deepseek` | `deepseek` |
 * | `xai` | `x-ai` |
 * | `kimi-coding`, `kimi-coding-cn` | `moonshotai` |
 * | `zai` | `zai` |
 * | `minimax`, `minimax-cn` | `minimax` |
 * | `arcee` | `arcee` |
 * | `novita`, `novita-ai`, `novitaai` | `novita` |
 * | `copilot`, `copilot-acp` | `github-copilot` (Copilot's per-token AI-credit rates) |
 *
 * Unmetered, never priced from the database (only by a price-file entry):
 * the flat-rate subscriptions `openai-codex`, `xai-oauth`, `qwen-oauth`,
 * `minimax-oauth`, `alibaba-coding-plan`, `opencode-go`, `stepfun` (Step
 * Plan), the coding-plan endpoints `api.kimi.com/coding` and
 * `api.z.ai/api/coding`, and local servers: `lmstudio`, or any base URL on
 * this machine (`localhost`, `127.0.0.0/8`, `::1`), where a model (a local
 * `deepseek-r1:14b` distill, say) shares its name with a paid API's.
 *
 * Every other name (`custom`, `nous`, `huggingface`, `nvidia`, `alibaba`,
 * `ollama-cloud`, `kilocode`, `opencode-zen`, ...; Hermes adds providers
 * often): the provider whose API URL pattern the base URL matches
 * (`custom` at `https://api.deepseek.com/v1` is `deepseek`), else genai-prices
 * matches by the model name alone; when that fails too, no cost.
 */
export const GENAI_PRICES_PROVIDER: Readonly<Record<string, string>> = {
  anthropic: 'anthropic',
  openai: 'openai',
  'openai-api': 'openai',
  openrouter: 'openrouter',
  gemini: 'google',
  vertex: 'google',
  bedrock: 'aws',
  'azure-foundry': 'azure',
  deepseek: 'deepseek',
  xai: 'x-ai',
  'kimi-coding': 'moonshotai',
  'kimi-coding-cn': 'moonshotai',
  zai: 'zai',
  minimax: 'minimax',
  'minimax-cn': 'minimax',
  arcee: 'arcee',
  novita: 'novita',
  'novita-ai': 'novita',
  novitaai: 'novita',
  copilot: 'github-copilot',
  'copilot-acp': 'github-copilot',
};

/** Flat-rate subscriptions and local servers: a per-call price from the database would be a guess. */
export const UNMETERED_PROVIDERS: ReadonlySet<string> = new Set([
  'openai-codex',
  'xai-oauth',
  'qwen-oauth',
  'minimax-oauth',
  'alibaba-coding-plan',
  'opencode-go',
  'stepfun',
  'lmstudio',
]);

/** Subscription endpoints reachable under a metered provider's name: host and path prefix. */
const UNMETERED_ENDPOINTS: readonly (readonly [host: string, pathPrefix: string])[] = [
  ['api.kimi.com', '/coding'],
  ['api.z.ai', '/api/coding'],
  ['chatgpt.com', '/backend-api/codex'],
];

export type Route =
  /** a provider of the table: calcPrice with its `providerId` */
  | { readonly kind: 'provider'; readonly providerId: string }
  /** an unknown provider with a base URL: calcPrice with `providerApiUrl` (the pricer checks that a pattern matches) */
  | { readonly kind: 'url'; readonly url: string }
  /** an unknown provider: calcPrice by the model name alone */
  | { readonly kind: 'model-name' }
  /** a subscription or a local server: no database price */
  | { readonly kind: 'unmetered' };

/** Hermes's spelling: it lower-cases and trims provider names (resolve_billing_route) */
export const normalizeProvider = (provider: string | undefined): string => (provider ?? '').trim().toLowerCase();

function isLoopback(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || h === '0.0.0.0' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** how a call is priced from the database (a price-file entry is tried before any of these) */
export function routeOf(provider: string | undefined, baseUrl: string | undefined): Route {
  const name = normalizeProvider(provider);
  if (UNMETERED_PROVIDERS.has(name)) return { kind: 'unmetered' };
  let url: URL | undefined;
  try {
    url = baseUrl ? new URL(baseUrl.trim()) : undefined;
  } catch {
    url = undefined;
  }
  if (url) {
    if (isLoopback(url.hostname)) return { kind: 'unmetered' };
    const host = url.hostname.toLowerCase();
    if (UNMETERED_ENDPOINTS.some(([h, p]) => host === h && url.pathname.startsWith(p))) return { kind: 'unmetered' };
  }
  if (Object.hasOwn(GENAI_PRICES_PROVIDER, name)) return { kind: 'provider', providerId: GENAI_PRICES_PROVIDER[name]! };
  if (url && (url.protocol === 'https:' || url.protocol === 'http:')) return { kind: 'url', url: url.href };
  return { kind: 'model-name' };
}
