import type { Middleware, ParameterizedContext } from 'koa';
import { clientAddressOf, TrustedProxies } from '../../lib/net/proxies';

declare module 'koa' {
  interface DefaultState {
    /** Set first thing for every request by `clientMiddleware`; read it with `clientAddress(ctx)`. */
    client?: { address: string; protocol: 'http' | 'https' };
  }
}

/**
 * The one place the client's address and scheme are decided (`TRUSTED_PROXIES`, docs/security.md).
 * `app.proxy` stays off, so Koa never reads forwarding headers by itself; this sets `ctx.ip` to
 * the answer, and X-Forwarded-Proto counts only when the peer is a trusted proxy.
 */
export function clientMiddleware(cidrs: readonly string[]): Middleware {
  const trusted = new TrustedProxies(cidrs);
  return async (ctx, next) => {
    const peer = ctx.req.socket.remoteAddress;
    const address = clientAddressOf(peer, ctx.req.headers['x-forwarded-for'], trusted);
    const forwardedProto = trusted.trusts(peer ?? '') ? ctx.get('x-forwarded-proto').split(',')[0].trim().toLowerCase() : '';
    const protocol = ctx.protocol === 'https' || forwardedProto === 'https' ? 'https' : 'http';
    ctx.request.ip = address;
    ctx.state.client = { address, protocol };
    return next();
  };
}

/** The client's IP address (rate limits, sign-in throttling, token `ip` claims). */
export function clientAddress(ctx: ParameterizedContext): string {
  return ctx.state.client?.address ?? ctx.ip;
}

/** `https` when the client reached us over TLS (directly, or at a trusted proxy that says so). */
export function clientProtocol(ctx: ParameterizedContext): 'http' | 'https' {
  return ctx.state.client?.protocol ?? (ctx.protocol === 'https' ? 'https' : 'http');
}
