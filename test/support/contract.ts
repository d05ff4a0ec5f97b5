import { createHash } from 'node:crypto';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Response } from 'supertest';
import { buildDocument, type OpenApiDocument } from '../../api/openapi/document';
import type { Config } from '../../lib/config';

/**
 * Checks answers against the OpenAPI document the server publishes: the operation and status must
 * be documented, the media type listed, and a JSON body must match the schema (ajv, JSON Schema
 * 2020-12, which OpenAPI 3.1 uses). test/support/stack.ts runs it on every answer its helpers get.
 */

type Operation = { responses?: Record<string, { content?: Record<string, { schema?: object }> }> };
interface Route {
  regex: RegExp;
  path: string;
  literals: number;
  ops: Record<string, Operation>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

/**
 * Compiled validators, shared by every checker in the process whose document has the same
 * components: each stack builds its own document (its base URL differs), but compiling the same
 * schemas again for each of a run's ~150 stacks cost about half a second of CPU a stack.
 */
const validators = new Map<string, { ajv: Ajv2020; compiled: Map<string, ValidateFunction> }>();
function validatorsFor(components: unknown): { ajv: Ajv2020; compiled: Map<string, ValidateFunction> } {
  const key = createHash('sha256').update(JSON.stringify(components ?? null)).digest('hex');
  let v = validators.get(key);
  if (!v) {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addFormat('binary', true);
    v = { ajv, compiled: new Map() };
    validators.set(key, v);
  }
  return v;
}
const checkers = new Map<string, ContractChecker>();
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export class ContractChecker {
  private readonly routes: Route[] = [];
  private readonly shared: { ajv: Ajv2020; compiled: Map<string, ValidateFunction> };
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly doc: OpenApiDocument) {
    this.shared = validatorsFor(doc.components);
    const rootServers = (doc.servers ?? []).map((s) => s.url);
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      const ops: Record<string, Operation> = {};
      const servers = new Set<string>();
      for (const m of METHODS) {
        const op = (item as Record<string, unknown>)[m] as (Operation & { servers?: Array<{ url: string }> }) | undefined;
        if (!op) continue;
        ops[m] = op;
        for (const s of op.servers ?? []) servers.add(s.url);
      }
      const prefixes = [...(servers.size ? servers : rootServers)].map((u) => new URL(u).pathname.replace(/\/+$/, ''));
      const template = path.split(/(\{[^}]+\})/).map((part) => (part.startsWith('{') ? '([^/]+)' : escape(part))).join('');
      for (const prefix of new Set(prefixes)) {
        this.routes.push({ regex: new RegExp(`^${escape(prefix)}${template}$`), path, literals: path.replace(/\{[^}]+\}/g, '').length, ops });
      }
    }
    // Literal paths win over templated ones (`/v/{s}/master.m3u8` before `/v/{s}/{rung}/…`).
    this.routes.sort((a, b) => b.literals - a.literals);
  }

  /**
   * The checker for a stack's config. It reads only the paths of the document's server URLs, and
   * the document depends on the config only through the URLs and the upload limits (the
   * `d.config.*` uses in each room's openapi.ts), so stacks that differ only in port share one: building the
   * document cost ~0.1 s of CPU for each of a run's ~150 stacks.
   */
  static forConfig(config: Config): ContractChecker {
    const pathOf = (u: string) => new URL(u).pathname;
    const key = JSON.stringify([pathOf(config.publicBaseUrl), pathOf(config.cdnUrl), pathOf(config.playerUrl), config.upload.maxBytes, config.upload.maxResumableBytes]);
    let checker = checkers.get(key);
    if (!checker) checkers.set(key, (checker = new ContractChecker(buildDocument(config))));
    return checker;
  }

  /** Throws an Error describing every way the answer departs from the document. */
  check(method: string, url: string, res: Pick<Response, 'status' | 'headers' | 'body' | 'text'>): void {
    const pathname = new URL(url, 'http://x').pathname;
    const m = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    const route = this.routes.find((r) => r.regex.test(pathname) && r.ops[m]);
    const where = `${method.toUpperCase()} ${pathname} → ${res.status}`;
    if (!route) {
      // No such endpoint: the answer must still be a documented error.
      if (res.status < 400) throw new Error(`contract: ${where} is not in the OpenAPI document (document it in api/<resource>/openapi.ts)`);
      this.validate(where, '#/components/schemas/Error', { $ref: '#/components/schemas/Error' }, res.body);
      return;
    }
    const op = route.ops[m];
    const response = op.responses?.[String(res.status)] ?? op.responses?.default;
    if (!response) {
      throw new Error(`contract: ${where}: status ${res.status} is not documented for ${m.toUpperCase()} ${route.path} (body: ${res.text?.slice(0, 300)})`);
    }
    if (!response.content || res.status === 204 || method.toLowerCase() === 'head') return;
    const type = String(res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    const media = Object.keys(response.content).find((k) => k === type || (k.endsWith('/*') && type.startsWith(k.slice(0, -1))));
    if (!media) throw new Error(`contract: ${where}: Content-Type ${type || '(none)'} is not one of ${Object.keys(response.content).join(', ')}`);
    const schema = response.content[media].schema;
    if (schema && /json/.test(media)) this.validate(where, `${m} ${route.path} ${res.status} ${media}`, schema, res.body);
  }

  private validate(where: string, key: string, schema: object, body: unknown): void {
    let fn = this.compiled.get(key);
    if (!fn) {
      // Shared by schema, not by operation: another config may document the same operation differently.
      const sharedKey = JSON.stringify(schema);
      fn = this.shared.compiled.get(sharedKey);
      if (!fn) {
        fn = this.shared.ajv.compile({ ...schema, components: this.doc.components });
        this.shared.compiled.set(sharedKey, fn);
      }
      this.compiled.set(key, fn);
    }
    if (!fn(body)) {
      const problems = (fn.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
      throw new Error(`contract: ${where}: the body does not match the document:\n  ${problems.join('\n  ')}\nbody: ${JSON.stringify(body).slice(0, 800)}`);
    }
  }
}
