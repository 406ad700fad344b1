// Thin fetch wrapper for Hearth's (Open WebUI-compatible) HTTP API. The
// session travels in the HttpOnly `token` cookie set by sign-in; the token
// from the sign-in answer is also kept in memory for Authorization headers.

let token: string | null = null;

export function setToken(t: string | null) {
  token = t;
}
export function getToken() {
  return token;
}

export class ApiError extends Error {
  constructor(public status: number, message: string) {
    super(message);
  }
}

export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let data: any = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!res.ok) {
    const detail = typeof data === 'object' && data ? data.detail ?? data.error?.message ?? data.message : data;
    throw new ApiError(res.status, typeof detail === 'string' && detail ? detail : `${res.status} ${res.statusText}`);
  }
  return data as T;
}

export function uuid(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export interface SessionUser {
  token?: string;
  id: string;
  email: string;
  name: string;
  role: 'admin' | 'user' | 'pending' | string;
  profile_image_url?: string;
}

export interface AppConfig {
  name: string;
  version?: string;
  onboarding?: boolean;
  features: Record<string, any>;
  ui?: Record<string, any>;
  default_models?: string;
  default_pinned_models?: string;
}

export interface ChatRow {
  id: string;
  title: string;
  updated_at: number;
  created_at: number;
}

export interface Model {
  id: string;
  name?: string;
  owned_by?: string;
}

export interface SearchRow {
  id: string;
  title: string;
  updated_at: number;
  snippet?: string;
}

export interface ApiKey {
  id: string;
  name: string;
  hint?: string;
  created_at?: number;
  last_used_at?: number | null;
  key?: string;
}
