// @vitest-environment happy-dom
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import Banners from './components/Banners.svelte';
import { json, stubFetch, tick } from './testing';

const banners = [
  { id: 'a', type: 'warning', title: 'Maintenance', content: 'Down at **22:00** <i>UTC</i>', dismissible: true, timestamp: 1 },
  { id: 'b', type: 'info', title: '', content: 'Always here', dismissible: false, timestamp: 1 },
];

let cmp: Record<string, any> | null = null;
beforeEach(() => localStorage.clear());
afterEach(() => {
  if (cmp) unmount(cmp);
  cmp = null;
  document.body.innerHTML = '';
  vi.unstubAllGlobals();
});

const shown = () => [...document.querySelectorAll('.banner-item')].map((e) => e.textContent?.replace(/\s+/g, ' ').trim());

it('renders banners as markdown text, dismisses for good, and shows an edited banner again', async () => {
  let list = banners;
  stubFetch((method, url) => (method === 'GET' && url === '/api/v1/configs/banners' ? json(200, list) : undefined));
  cmp = mount(Banners, { target: document.body, props: { reload: 1 } });
  await tick();
  flushSync();
  expect(shown()).toHaveLength(2);
  expect(document.querySelector('.banner-item strong + .content strong')?.textContent).toBe('22:00');
  expect(document.querySelector('.banner-item i')).toBeNull(); // raw HTML stays text
  expect(shown()[0]).toContain('<i>UTC</i>');
  // Only the dismissible one has a button.
  const buttons = document.querySelectorAll('button[aria-label="Dismiss banner"]');
  expect(buttons).toHaveLength(1);
  (buttons[0] as HTMLButtonElement).click();
  flushSync();
  expect(shown()).toEqual(['info Always here']);

  // A new page load keeps it dismissed.
  unmount(cmp);
  cmp = mount(Banners, { target: document.body, props: { reload: 1 } });
  await tick();
  flushSync();
  expect(shown()).toEqual(['info Always here']);

  // The admin edits it (new timestamp): it shows again.
  unmount(cmp);
  list = [{ ...banners[0], timestamp: 2 }, banners[1]];
  cmp = mount(Banners, { target: document.body, props: { reload: 1 } });
  await tick();
  flushSync();
  expect(shown()).toHaveLength(2);
});
