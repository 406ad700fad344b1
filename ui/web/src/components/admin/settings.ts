// Drafts of Hearth's settings (GET /api/v1/configs/settings) for the General
// tab: a setting's value as its input holds it, and back. Kept apart from
// the component so the conversions are plain functions.
import type { PermTree, Setting } from './types';

/** What an input holds: a checkbox a boolean, the permission tree an object, the rest text. */
export type Draft = string | boolean | PermTree;

/** The draft of a setting's current value. Secrets start blank (= unchanged). */
export function toDraft(s: Setting): Draft {
  if (s.secret) return '';
  switch (s.type) {
    case 'bool':
      return s.value === true;
    case 'permissions':
      // A deep copy by JSON: the row may be a $state proxy, which structuredClone refuses.
      return JSON.parse(JSON.stringify(s.value ?? {})) as PermTree;
    case 'json':
      return JSON.stringify(s.value ?? {}, null, 2);
    case 'list':
      return Array.isArray(s.value) ? s.value.join('\n') : '';
    default:
      return s.value == null ? '' : String(s.value);
  }
}

export type Parsed = { value: unknown } | { error: string } | { unchanged: true };

/** The value a draft stands for, or why it cannot be saved. */
export function parseDraft(s: Setting, d: Draft): Parsed {
  if (s.secret) return d === '' ? { unchanged: true } : { value: d };
  switch (s.type) {
    case 'bool':
      return { value: d === true };
    case 'permissions':
      return { value: d };
    case 'int':
    case 'optional_int': {
      const t = String(d).trim();
      if (t === '') return s.type === 'optional_int' ? { value: '' } : { error: 'A number is required.' };
      const n = Number(t);
      if (!Number.isInteger(n)) return { error: 'Must be a whole number.' };
      if (s.type === 'int' && s.min != null && n < s.min) return { error: `At least ${s.min}.` };
      if (s.max != null && n > s.max) return { error: `At most ${s.max}.` };
      return { value: n };
    }
    case 'json': {
      try {
        const v = JSON.parse(String(d));
        if (v && typeof v === 'object' && !Array.isArray(v)) return { value: v };
      } catch {
        return { error: 'Not valid JSON.' };
      }
      return { error: 'Must be a JSON object.' };
    }
    case 'list':
      return { value: String(d).split('\n').map((x) => x.trim()).filter(Boolean) };
    default:
      return { value: String(d) };
  }
}

/** The settings whose draft differs from the stored value: {NAME: value}. */
export function changes(rows: Setting[], drafts: Record<string, Draft>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of rows) {
    if (!(s.name in drafts)) continue;
    const p = parseDraft(s, drafts[s.name]);
    if ('value' in p && JSON.stringify(p.value) !== JSON.stringify(s.value)) out[s.name] = p.value;
  }
  return out;
}

/** The settings the General tab edits: persistent ones not edited in a tab of their own. */
export const editable = (s: Setting) => s.persistent && s.section !== 'connections' && s.type !== 'banners';

export const SECTION_TITLES: Record<string, string> = {
  general: 'General',
  auth: 'Authentication',
  permissions: 'Default user permissions',
  oauth: 'OAuth / SSO',
  tasks: 'Background tasks',
  limits: 'Limits',
  scim: 'SCIM',
  rag: 'Documents and retrieval (RAG)',
  trusted_header: 'Trusted header sign-in',
  server: 'Server',
};
