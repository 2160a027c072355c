// What the browser scripts share: their settings from the environment, headless Chromium
// driven by playwright-core, one screenshot and one `ok <step>` line per step, and a failure
// (exit 1) for any page error or console error (a script the policy blocked).
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** Generous: a loaded 2-core machine. */
export const TIMEOUT = 60_000;

/** A setting the test passed in the environment. */
export const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

/** Runs `script(context, step, watch)` in a fresh browser (ARTIFACTS, PLAYWRIGHT, CHROMIUM). */
export async function inBrowser(script) {
  const artifacts = env('ARTIFACTS');
  const { chromium } = createRequire(join(env('PLAYWRIGHT'), 'package.json'))('playwright-core');
  mkdirSync(artifacts, { recursive: true });
  const browser = await chromium.launch({
    executablePath: env('CHROMIUM'),
    headless: true,
    // Root in a container has no user namespaces for Chromium's sandbox.
    args: ['--no-sandbox'],
  });
  const problems = [];
  /** Page errors, console errors and failed requests fail the run. */
  const watch = (page) => {
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} for ${response.url()}`);
    });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
    });
  };
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(TIMEOUT);
    const page = await context.newPage();
    watch(page);
    const step = async (name, what) => {
      await what();
      await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
      console.log(`ok ${name}`);
    };
    await script({ context, page, step, watch, artifacts });
  } finally {
    await browser.close();
  }
  if (problems.length > 0) {
    console.error(`the pages reported errors:\n${problems.join('\n')}`);
    process.exit(1);
  }
}
