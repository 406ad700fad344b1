// Attachments of the chat composer: uploading a file (POST /api/v1/files/),
// following its processing status (the SSE stream of
// GET /api/v1/files/{id}/process/status, COMPAT.md §8.3), and the items a
// user message and a completion request carry in `files` — the shapes Open
// WebUI's client uses, so chats move between the two.

import { getToken } from './api';

/** An uploaded file as the server describes it (Open WebUI's FileModel). */
export interface FileRecord {
  id: string;
  filename: string;
  data?: { status?: string; error?: string };
  meta?: { name?: string; size?: number; content_type?: string | null; collection_name?: string };
  [key: string]: unknown;
}

/**
 * One item of a message's `files` (and of the request's `files`).
 * Files go uploading → processing → uploaded (Open WebUI's word for ready)
 * or failed; collections are ready at once ("processed", as Open WebUI).
 */
export interface FileItem {
  type: 'file' | 'collection' | string;
  id: string | null;
  name: string;
  status: 'uploading' | 'processing' | 'uploaded' | 'processed' | 'failed' | string;
  /** the client's own key: the id is only known once the upload answered */
  itemId?: string;
  file?: FileRecord | '';
  url?: string;
  collection_name?: string;
  size?: number;
  error?: string;
  description?: string;
  [key: string]: unknown;
}

/** Still on its way: a message cannot be sent with it yet. */
export const isBusy = (f: FileItem) => f.status === 'uploading' || f.status === 'processing';

/** "12 KB" (binary units, as file managers show them). */
export function formatSize(bytes: number | undefined): string {
  if (typeof bytes !== 'number' || !isFinite(bytes) || bytes < 0) return '';
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let n = bytes / 1024;
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n < 10 ? n.toFixed(1) : Math.round(n)} ${units[i]}`;
}

/** Where a stored file's bytes open (a new tab; the session cookie authenticates). */
export const contentUrl = (id: string) => `/api/v1/files/${encodeURIComponent(id)}/content`;

function authHeaders(): Record<string, string> {
  const t = getToken();
  return t ? { Authorization: `Bearer ${t}`, Accept: 'application/json' } : { Accept: 'application/json' };
}

/** The server's `detail` of a failed answer (as api() reads it), else the status line. */
async function failure(res: Response): Promise<Error> {
  let detail: unknown;
  try {
    const body = await res.json();
    detail = body?.detail ?? body?.error?.message ?? body?.message;
  } catch {
    /* not JSON */
  }
  return new Error(typeof detail === 'string' && detail ? detail : `${res.status} ${res.statusText}`.trim());
}

/** Uploads one file; the answer comes at once, with processing still pending. */
export async function uploadFile(file: File, signal?: AbortSignal): Promise<FileRecord> {
  const form = new FormData();
  form.append('file', file, file.name);
  const res = await fetch('/api/v1/files/', {
    method: 'POST',
    headers: authHeaders(),
    credentials: 'same-origin',
    body: form,
    signal,
  });
  if (!res.ok) throw await failure(res);
  return (await res.json()) as FileRecord;
}

export interface Processed {
  status: 'completed' | 'failed';
  error?: string;
}

/**
 * Follows a file's processing until it ends. The stream sends
 * `data: {"status": ...}` events: pending ones while it works, then
 * completed, failed (with error) or not_found. A stream that ends without
 * a verdict is a file that is never processed, which is as ready as it
 * gets.
 */
export async function waitProcessed(id: string, signal?: AbortSignal): Promise<Processed> {
  const res = await fetch(`/api/v1/files/${encodeURIComponent(id)}/process/status?stream=true`, {
    headers: { ...authHeaders(), Accept: 'text/event-stream' },
    credentials: 'same-origin',
    signal,
  });
  if (!res.ok) throw await failure(res);
  if (!res.body) return { status: 'completed' };
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (value) buf += value;
      // Events end with a blank line; only `data:` lines matter here.
      let end: number;
      while ((end = buf.search(/\r?\n\r?\n/)) >= 0) {
        const verdict = statusOf(buf.slice(0, end));
        buf = buf.slice(end).replace(/^\r?\n\r?\n/, '');
        if (verdict) return verdict;
      }
      if (done) return statusOf(buf) ?? { status: 'completed' };
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}

/** The verdict an SSE event carries, or null for "still pending" and noise. */
function statusOf(event: string): Processed | null {
  const data = event
    .split(/\r?\n/)
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trim())
    .join('\n');
  if (!data) return null;
  let s: { status?: string; error?: string };
  try {
    s = JSON.parse(data);
  } catch {
    return null;
  }
  if (s.status === 'completed') return { status: 'completed' };
  if (s.status === 'failed') return { status: 'failed', error: s.error || 'Processing failed.' };
  if (s.status === 'not_found') return { status: 'failed', error: 'The file was deleted.' };
  return null;
}

/** Deletes an uploaded file (removing an attachment before sending it). */
export async function deleteFile(id: string): Promise<void> {
  await fetch(`/api/v1/files/${encodeURIComponent(id)}`, {
    method: 'DELETE',
    headers: authHeaders(),
    credentials: 'same-origin',
  }).catch(() => {});
}

/** A knowledge collection as GET /api/v1/knowledge/ lists it. */
export interface Collection {
  id: string;
  name: string;
  description?: string;
  [key: string]: unknown;
}

/** A collection as a `files` item (Open WebUI's knowledge picker adds these). */
export function collectionItem(k: Collection): FileItem {
  return { ...k, type: 'collection', id: k.id, name: k.name, description: k.description ?? '', status: 'processed', itemId: k.id };
}

/**
 * The completion request's `files`: every file and collection attached to
 * the user messages of the thread so far (Open WebUI sends the chat's files
 * on every turn), each once.
 */
export function requestFiles(messages: { role: string; files?: unknown }[]): FileItem[] {
  const out: FileItem[] = [];
  const seen = new Set<string>();
  for (const m of messages) {
    if (m.role !== 'user' || !Array.isArray(m.files)) continue;
    for (const f of m.files as FileItem[]) {
      if (!f || (f.type !== 'file' && f.type !== 'collection') || !f.id || f.status === 'failed') continue;
      const key = `${f.type}:${f.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(f);
    }
  }
  return out;
}
