import type { NextFunction, Request, Response } from 'express';
import type { OperationDef } from '@vouch/contracts';
import { OAuthError, OAuthErrorCode, bearerAuthChallengeResponse, verifyBearerToken, type AuthInfo } from '@modelcontextprotocol/server';
import { isOperator, type Caller } from './api-keys.js';
import { errorBodyOf, problemFromBody, sendProblem } from './problem.js';

/** What the gateway puts in an MCP request's AuthInfo.extra: the caller, resolved once per request. */
export interface McpAuthExtra extends Record<string, unknown> {
  caller: Caller;
  requestId: string;
}

/** The caller and request id of an authenticated MCP request. */
export function mcpCallerOf(authInfo: AuthInfo | undefined): McpAuthExtra {
  const extra = authInfo?.extra as McpAuthExtra | undefined;
  if (!extra?.caller) throw new Error('an MCP request reached the server without passing mcpBearerAuth');
  return extra;
}

/** Signals a dependency outage out of the verifier, so that it answers 503 as every other route does. */
class KeyCheckUnavailable extends Error {
  constructor(readonly reason: unknown) {
    super('the API key could not be checked');
  }
}

/**
 * Bearer authentication for /mcp with the SDK's own bearer-auth core
 * (`verifyBearerToken` and `bearerAuthChallengeResponse`, what the SDK's
 * Express `requireBearerAuth` is made of), so the 401 and 403 answers carry
 * the `WWW-Authenticate: Bearer error=…` challenge MCP clients act on. The
 * key is checked exactly as on every /v1 route (the same key cache), and one
 * thing differs from the SDK's middleware: a Postgres outage while checking
 * answers 503 with Retry-After, as everywhere else, instead of a 500.
 *
 * A key is refused 403 when it can reach no tool: an operator key (the queue
 * dashboard's credential, which reaches no tenant), or a key with none of
 * the scopes the tools need. The clear key goes no further than this
 * function: AuthInfo carries the key's id.
 */
export function mcpBearerAuth(authenticate: (key: string) => Promise<Caller | undefined>, tools: readonly Pick<OperationDef, 'scope'>[]) {
  const reachable = new Set(tools.map((t) => t.scope));
  const verifier = {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      let caller: Caller | undefined;
      try {
        caller = await authenticate(token);
      } catch (err) {
        throw new KeyCheckUnavailable(err);
      }
      if (!caller) throw new OAuthError(OAuthErrorCode.InvalidToken, 'this API key is unknown or revoked: create a new one with `npm run keys -- create --tenant NAME`');
      if (isOperator(caller)) throw new OAuthError(OAuthErrorCode.InsufficientScope, 'an operator key opens the queue dashboard only; MCP tools run in a tenant: use that tenant\'s key');
      if (!caller.scopes.includes('admin') && !caller.scopes.some((s) => reachable.has(s))) {
        throw new OAuthError(OAuthErrorCode.InsufficientScope, `this API key holds none of the scopes the MCP tools need (${[...reachable].join(', ')}): create a key with --scopes ${[...reachable].join(',')}`);
      }
      // API keys do not expire (they are revoked, and every request checks that); the SDK's check wants an expiry.
      return { token: caller.keyId, clientId: caller.keyId, scopes: caller.scopes, expiresAt: Math.floor(Date.now() / 1000) + 3600, extra: { caller } };
    },
  };
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const requestId = res.locals.requestId as string;
    try {
      const auth = await verifyBearerToken(req.headers.authorization, { verifier });
      // toNodeHandler hands req.auth to the MCP server as its AuthInfo.
      (req as Request & { auth?: AuthInfo }).auth = { ...auth, extra: { ...auth.extra, requestId } };
      return next();
    } catch (err) {
      if (err instanceof KeyCheckUnavailable) {
        return sendProblem(res, problemFromBody(errorBodyOf(err.reason), { instance: req.originalUrl, requestId }));
      }
      const answer = bearerAuthChallengeResponse(err);
      const challenge = answer.headers.get('WWW-Authenticate');
      if (challenge !== null) res.setHeader('WWW-Authenticate', challenge);
      res.status(answer.status).type('application/json').send(await answer.text());
    }
  };
}
