import type { Page } from 'playwright-core';

/** The two widths issue 49 was tried at: a laptop and a phone. */
export const VIEWPORTS = { desktop: { width: 1366, height: 900 }, phone: { width: 390, height: 844 } } as const;

/** Signs `page` in to the dashboard as `me`; answers the page on the Videos list. */
export async function signIn(page: Page, base: string, me: { email: string; password: string }): Promise<Page> {
  await page.goto(`${base}/dashboard`);
  await page.getByLabel('Email').fill(me.email);
  await page.getByLabel('Password').fill(me.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Videos' }).waitFor();
  return page;
}

/** Every console error and uncaught exception of the page and its frames (a failed favicon load included), with the URL it happened on. */
export function watchConsole(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`${page.url()}: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`));
  return errors;
}
