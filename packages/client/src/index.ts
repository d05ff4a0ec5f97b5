import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema';

export type { components, paths } from './schema';
export type VidhostClient = Client<paths>;
export type Video = components['schemas']['Video'];

export interface ClientOptions {
  /** The API's base URL (`PUBLIC_BASE_URL`), e.g. `http://localhost:3000`; `/v1` is added. */
  baseUrl: string;
  apiKey: string;
  fetch?: typeof fetch;
}

/**
 * A typed client for the vidhost API (openapi-fetch over the generated schema.ts):
 * `const { data, error } = await client.POST('/upload/init', { body })`. Paths are the
 * document's, without the prefix; the client talks to the canonical `/v1`.
 */
export function createVidhostClient(opts: ClientOptions): VidhostClient {
  return createClient<paths>({
    baseUrl: `${opts.baseUrl.replace(/\/+$/, '')}/v1`,
    headers: { Authorization: `Bearer ${opts.apiKey}` },
    fetch: opts.fetch,
  });
}
