/**
 * How suites that walk the operation table call an operation over raw HTTP:
 * path parameters into the path, the rest into the query (GET, DELETE) or a
 * JSON body (POST). Raw, unlike the typed client, so a suite can send what a
 * client never would.
 */
import { pathParams, type OperationDef } from '@vouch/contracts';

export interface OperationRequest {
  method: string;
  path: string;
  body?: string;
}

export function operationRequest(op: OperationDef, input: Record<string, unknown>): OperationRequest {
  const params = pathParams(op.http.path);
  const path = op.http.path.replace(/:([A-Za-z][A-Za-z0-9]*)/g, (_, name: string) => encodeURIComponent(String(input[name] ?? '')));
  const rest = Object.fromEntries(Object.entries(input).filter(([k]) => !params.includes(k)));
  if (op.http.method === 'POST') return { method: 'POST', path, body: JSON.stringify(rest) };
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) query.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
  const qs = query.toString();
  return { method: op.http.method, path: qs ? `${path}?${qs}` : path };
}

/** Sends an operation request with a key; returns status, headers and the parsed body. */
export async function sendOperation(baseUrl: string, key: string, request: OperationRequest): Promise<{ status: number; headers: Headers; text: string; body: unknown }> {
  const res = await fetch(`${baseUrl}${request.path}`, {
    method: request.method,
    headers: { authorization: `Bearer ${key}`, ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(request.body !== undefined ? { body: request.body } : {}),
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}
