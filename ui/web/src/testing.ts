// Helpers shared by the component tests (happy-dom): a fetch stub that
// records calls, JSON responses, and a short wait for promises to settle.
import { vi } from 'vitest';

export const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));

export const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

export type Call = { method: string; url: string; body: any };
export type Handler = (method: string, url: string, body: any) => Response | undefined;

/** Stubs fetch with handler (404 {detail} when it returns nothing) and returns the calls made. */
export function stubFetch(handler: Handler): Call[] {
  const calls: Call[] = [];
  vi.stubGlobal('fetch', vi.fn(async (url: string, init?: RequestInit) => {
    const method = init?.method ?? 'GET';
    const body = init?.body ? JSON.parse(init.body as string) : undefined;
    calls.push({ method, url, body });
    return handler(method, url, body) ?? json(404, { detail: 'Not Found' });
  }));
  return calls;
}
