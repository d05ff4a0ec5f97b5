import type { Config } from '../config';
import { type SealingKey, seal, sealingKey, unseal } from '../secrets';
import type { Db } from '../db';

const keys = new WeakMap<Config, SealingKey>();
const keyOf = (config: Config) => {
  let k = keys.get(config);
  if (!k) keys.set(config, (k = sealingKey(config.secretsKey, 'webhook-secret')));
  return k;
};

/** What `webhook_endpoints.secret` holds for a `whsec_` secret: it sealed, never the secret. */
export const sealWebhookSecret = (config: Config, secret: string) => seal(keyOf(config), secret);
export const openWebhookSecret = (config: Config, stored: string) => unseal(keyOf(config), stored);

/** Seals the secrets of endpoints made before they were sealed (run at start; idempotent). */
export async function sealLegacyWebhookSecrets(db: Db, config: Config): Promise<number> {
  const rows: Array<{ id: string; secret: string }> = await db('webhook_endpoints').where('secret', 'like', 'whsec\\_%').select('id', 'secret');
  for (const r of rows) await db('webhook_endpoints').where({ id: r.id, secret: r.secret }).update({ secret: sealWebhookSecret(config, r.secret) });
  return rows.length;
}
