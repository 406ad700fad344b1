// @vitest-environment happy-dom
import { afterEach, describe, expect, it } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import Auth from './components/Auth.svelte';
import type { AppConfig } from './lib/api';

let comp: Record<string, any> | null = null;

afterEach(() => {
  if (comp) unmount(comp);
  comp = null;
  document.body.innerHTML = '';
  history.replaceState(null, '', '/');
});

function show(config: Record<string, unknown>) {
  comp = mount(Auth, { target: document.body, props: { config: config as unknown as AppConfig, onsession: () => {} } });
  flushSync();
}

describe('OAuth sign-in', () => {
  it('offers "Continue with <name>" for each provider of /api/config', () => {
    show({ name: 'Hearth', features: { enable_login_form: true }, oauth: { providers: { oidc: 'Acme SSO' } } });
    const a = document.querySelector<HTMLAnchorElement>('a.oauth');
    expect(a?.textContent).toBe('Continue with Acme SSO');
    expect(a?.getAttribute('href')).toBe('/oauth/oidc/login');
    expect(document.querySelector('input[type=email]')).not.toBeNull();
  });

  it('shows no provider link without providers', () => {
    show({ name: 'Hearth', features: {}, oauth: { providers: {} } });
    expect(document.querySelector('a.oauth')).toBeNull();
  });

  it('keeps the provider link when the login form is off', () => {
    show({ name: 'Hearth', features: { enable_login_form: false }, oauth: { providers: { oidc: 'SSO' } } });
    expect(document.querySelector('a.oauth')?.textContent).toBe('Continue with SSO');
    expect(document.querySelector('input[type=email]')).toBeNull();
    expect(document.body.textContent).not.toContain('sign-in form is disabled');
  });

  it('shows the error the callback passed back, as text, and clears it from the URL', () => {
    history.replaceState(null, '', '/auth?error=' + encodeURIComponent('<b>You do not have permission</b>'));
    show({ name: 'Hearth', features: { enable_login_form: true }, oauth: { providers: { oidc: 'SSO' } } });
    const err = document.querySelector('[role=alert]');
    expect(err?.textContent).toBe('<b>You do not have permission</b>');
    expect(err?.querySelector('b')).toBeNull();
    expect(location.search).toBe('');
  });
});
