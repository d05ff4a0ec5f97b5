// Credentials never reach logs (SPEC §12): upload and playback tokens ride in request paths and
// query strings, so the request log writes them redacted.

export const REDACTED = '[redacted]';

// A public video id or UUID is not a secret; anything else in a token position is.
const PUBLIC_ID = /^(vid_[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

// Path segments that are followed by a token: /storage/upload/<token>, /upload/tus/<token>,
// /cdn/v/<id or token>/…
const TOKEN_AFTER: ReadonlyArray<readonly string[]> = [
  ['storage', 'upload'],
  ['upload', 'tus'],
  ['cdn', 'v'],
];

// Query parameters that carry credentials: playback tokens, S3 presigned signatures, keys.
const SECRET_PARAMS = /^(token|access_token|signature|sig|key|api_key|apikey|x-api-key|x-amz-signature|x-amz-credential|x-amz-security-token)$/i;

function redactPath(path: string): string {
  const parts = path.split('/');
  for (let i = 0; i < parts.length; i++) {
    for (const [a, b] of TOKEN_AFTER) {
      if (parts[i] === a && parts[i + 1] === b && parts[i + 2] !== undefined && parts[i + 2] !== '') {
        let seg = parts[i + 2];
        try {
          seg = decodeURIComponent(seg);
        } catch {
          // a malformed escape is as secret as any other token
        }
        if (!PUBLIC_ID.test(seg)) parts[i + 2] = REDACTED;
      }
    }
  }
  return parts.join('/');
}

function redactQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // keep the raw name
      }
      return SECRET_PARAMS.test(decoded) && eq >= 0 ? `${name}=${REDACTED}` : pair;
    })
    .join('&');
}

/** A request path with its query string, tokens replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return redactPath(url);
  return `${redactPath(url.slice(0, q))}?${redactQuery(url.slice(q + 1))}`;
}

/**
 * `text` with every occurrence of each secret (as is and URL-encoded) replaced by `[redacted]`,
 * longest first: for messages that quote a credential, e.g. ffmpeg's stderr naming the simulcast
 * target URL with a third party's stream key in it (issue 33 row 5).
 */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | null | undefined>): string {
  const forms = new Set<string>();
  for (const s of secrets) {
    if (!s) continue;
    forms.add(s);
    forms.add(encodeURIComponent(s));
  }
  let out = text;
  for (const f of [...forms].sort((a, b) => b.length - a.length)) out = out.split(f).join(REDACTED);
  return out;
}
