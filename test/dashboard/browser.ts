/**
 * Real Chromium for the dashboard tests: Debian's /usr/bin/chromium driven by playwright-core
 * (`.ci/run` installs it). axe-core checks accessibility inside the page.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import type { App } from '../../src/app.ts';

export const CHROMIUM = process.env.DOCWRIGHT_TEST_CHROMIUM ?? '/usr/bin/chromium';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}

export const PASSWORD = 'correct horse battery staple';

/** An operator account for the tests (hashing takes a moment; make few). */
export async function createOperator(app: App, email = 'ada@example.com'): Promise<string> {
  await app.operators.create({ email, password: PASSWORD });
  return email;
}

/** A browser context signed in through the real sign-in form. */
export async function signedIn(
  browser: Browser,
  baseUrl: string,
  email: string,
  options: { width?: number } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    baseURL: baseUrl,
    viewport: { width: options.width ?? 1280, height: 900 },
  });
  const page = await context.newPage();
  await page.goto('/login');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await Promise.all([
    page.waitForURL((url) => url.pathname === '/'),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
  return { context, page };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern.
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(): Promise<{
            violations: Array<{
              id: string;
              impact: string | null;
              help: string;
              nodes: Array<{ target: unknown }>;
            }>;
          }>;
        };
      }
    ).axe;
    const result = await axe.run();
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => JSON.stringify(n.target)),
      }));
  });
}

/**
 * What is too wide for the viewport: the document itself (horizontal scrolling of the page),
 * or content cut off by a box that hides its overflow. Form controls scroll their own text.
 */
export function tooWide(page: Page): Promise<string[]> {
  return page.evaluate(`(() => {
    const problems = [];
    const root = document.scrollingElement;
    if (root.scrollWidth > root.clientWidth) problems.push('page ' + root.scrollWidth + ' > ' + root.clientWidth + ' px');
    for (const el of document.querySelectorAll('main *')) {
      if (['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName)) continue;
      const overflow = getComputedStyle(el).overflowX;
      if ((overflow === 'hidden' || overflow === 'clip') && el.scrollWidth > el.clientWidth + 1) {
        problems.push(el.tagName.toLowerCase() + '.' + el.className + ' cuts off ' + (el.scrollWidth - el.clientWidth) + ' px');
      }
    }
    return problems;
  })()`);
}
