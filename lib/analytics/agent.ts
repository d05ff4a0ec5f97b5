import Bowser from 'bowser';

/** What is kept of a user agent: families only, never the version string or the device model. */
export interface AgentClass {
  browser: string;
  os: string;
  device: 'desktop' | 'mobile' | 'tablet' | 'tv' | 'bot' | 'other';
}

const cache = new Map<string, AgentClass>();
const CACHE_MAX = 5000;

/** Reduces a user agent with bowser (MIT, maintained); results are cached, most agents repeat. */
export function classifyAgent(ua: string): AgentClass {
  const key = ua.slice(0, 512);
  const hit = cache.get(key);
  if (hit) return hit;
  let out: AgentClass;
  if (!key) out = { browser: 'Unknown', os: 'Unknown', device: 'other' };
  else {
    const p = Bowser.parse(key);
    const platform = p.platform.type;
    const bot = /bot|crawler|spider|headless/i.test(key);
    out = {
      browser: p.browser.name || 'Unknown',
      os: p.os.name || 'Unknown',
      device: bot ? 'bot' : platform === 'desktop' || platform === 'mobile' || platform === 'tablet' || platform === 'tv' ? platform : 'other',
    };
  }
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
  cache.set(key, out);
  return out;
}
