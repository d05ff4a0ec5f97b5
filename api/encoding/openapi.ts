import { type DocContext, operation } from '../openapi/operation';
import { encodingDefaults, patchEncodingDefaultsBody } from './schema';

export function encodingDocs(d: DocContext): void {
  const tag = 'Encoding';
  operation(d, { method: 'get', path: '/encoding-defaults', operationId: 'getEncodingDefaults', tag, summary: "The workspace's default codecs (SPEC §21)", responses: { 200: encodingDefaults }, errors: [] });
  operation(d, {
    method: 'patch', path: '/encoding-defaults', operationId: 'updateEncodingDefaults', tag,
    summary: "Set the workspace's default codecs, taken by videos created without `codecs` (new videos only; owners: a member's session gets 403 `owner_required`)",
    body: patchEncodingDefaultsBody, responses: { 200: encodingDefaults }, errors: [400, 403],
  });
}
