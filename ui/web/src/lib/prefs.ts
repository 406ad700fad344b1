// Per-user UI preferences kept server-side in the user's settings
// (GET/POST /api/v1/users/user/settings, key "ui", as Open WebUI does) —
// pinned models follow the user across browsers — plus the last model used,
// kept in this browser only.

import { api } from './api';

type UISettings = Record<string, unknown> & { pinnedModels?: string[] };

let loaded: Promise<UISettings> | null = null;

/** The user's "ui" settings, fetched once per page (reset on sign-out). */
export function uiSettings(): Promise<UISettings> {
  loaded ??= api<{ ui?: UISettings } | null>('GET', '/api/v1/users/user/settings')
    .then((s) => (s && typeof s.ui === 'object' && s.ui ? s.ui : {}))
    .catch(() => ({}));
  return loaded;
}

export function resetPrefs() {
  loaded = null;
}

/**
 * The user's pinned model ids; a user who never pinned one gets
 * DEFAULT_PINNED_MODELS (the comma-separated fallback from /api/config).
 */
export async function pinnedModels(fallback = ''): Promise<string[]> {
  const ui = await uiSettings();
  if (Array.isArray(ui.pinnedModels)) return ui.pinnedModels.filter((x) => typeof x === 'string');
  return fallback.split(',').map((s) => s.trim()).filter(Boolean);
}

/** Saves the pinned model ids (the rest of "ui" is sent back unchanged). */
export async function setPinnedModels(ids: string[]): Promise<void> {
  const ui = { ...(await uiSettings()), pinnedModels: ids };
  await api('POST', '/api/v1/users/user/settings/update', { ui });
  loaded = Promise.resolve(ui);
}

const LAST = 'hearth.lastModel';

export function lastModel(): string {
  try {
    return localStorage.getItem(LAST) ?? '';
  } catch {
    return '';
  }
}

export function rememberModel(id: string) {
  try {
    localStorage.setItem(LAST, id);
  } catch {
    /* private mode */
  }
}

/**
 * The model a new chat starts with: the first of DEFAULT_MODELS that exists,
 * else the last one used here, else the first pinned, else the first model
 * that is not an embedding model (those cannot chat).
 */
export function pickDefault(models: { id: string }[], defaults: string, pinned: string[], last: string): string {
  const ids = new Set(models.map((m) => m.id));
  for (const id of defaults.split(',').map((s) => s.trim())) if (id && ids.has(id)) return id;
  if (last && ids.has(last)) return last;
  for (const id of pinned) if (ids.has(id)) return id;
  const chat = models.find((m) => !/embed/i.test(m.id));
  return (chat ?? models[0])?.id ?? '';
}
