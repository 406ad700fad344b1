// Theme preference: 'light' | 'dark' | 'system', kept in localStorage and
// applied as <html data-theme="light|dark"> (app.css honours it). 'system'
// follows prefers-color-scheme and keeps following it while the page is open.

export type Theme = 'light' | 'dark' | 'system';
const KEY = 'hearth.theme';

export function getTheme(): Theme {
  try {
    const t = localStorage.getItem(KEY);
    if (t === 'light' || t === 'dark' || t === 'system') return t;
  } catch {
    /* storage unavailable */
  }
  return 'system';
}

function systemDark(): boolean {
  try {
    return typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches;
  } catch {
    return false;
  }
}

export function applyTheme(t: Theme = getTheme()) {
  const effective = t === 'system' ? (systemDark() ? 'dark' : 'light') : t;
  document.documentElement.setAttribute('data-theme', effective);
}

export function setTheme(t: Theme) {
  try {
    localStorage.setItem(KEY, t);
  } catch {
    /* storage unavailable: still apply for this page */
  }
  applyTheme(t);
}

let watching = false;
/** Apply the stored theme and re-apply on OS scheme changes while 'system' is chosen. */
export function initTheme() {
  applyTheme();
  if (watching || typeof matchMedia !== 'function') return;
  watching = true;
  try {
    matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
      if (getTheme() === 'system') applyTheme('system');
    });
  } catch {
    /* old browsers */
  }
}
