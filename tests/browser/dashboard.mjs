// The dashboard in a real browser: the system's Chromium, headless, driven by playwright-core.
// tests/browser/dashboard_browser.rs starts an MCP server with a slow background job and the
// dashboard, then runs this with:
//   DASHBOARD_URL  the URL the dashboard printed (with its one-time token)
//   JOB_ID         the running job
//   ANSWERED_ID    a completed job whose answer is markdown with raw HTML in it
//   REVIEW_ID      a completed job isolated in a worktree that added HTML to notes.txt
// and common.mjs's settings. Each step prints one line; any failure exits 1.
import { join } from 'node:path';

import { TIMEOUT, env, inBrowser } from './common.mjs';

const url = env('DASHBOARD_URL');
const id = env('JOB_ID');
const answered = env('ANSWERED_ID');
const reviewed = env('REVIEW_ID');

await inBrowser(async ({ context, page, step, watch, artifacts }) => {
  const row = page.locator(`tr[data-job-id="${id}"]`);
  const eventsOf = async () => Number((await row.locator('.events').textContent()).match(/\d+/)[0]);
  let first = 0;
  await step('01-list-shows-the-running-job', async () => {
    await page.goto(url);
    if (new URL(page.url()).search !== '') throw new Error(`the token stayed in the address: ${page.url()}`);
    await row.locator('.status.running').waitFor();
    await row.locator('.progress', { hasText: 'thinking' }).waitFor();
    first = await eventsOf();
  });
  await step('02-list-progress-moves', async () => {
    await page.waitForFunction(
      ([selector, before]) => {
        const text = document.querySelector(selector)?.textContent || '';
        return Number((text.match(/\d+/) || ['0'])[0]) > before;
      },
      [`tr[data-job-id="${id}"] .events`, first],
      { timeout: TIMEOUT },
    );
    const elapsed = row.locator('.elapsed');
    const before = await elapsed.textContent();
    await page.waitForFunction(
      ([selector, was]) => document.querySelector(selector)?.textContent !== was,
      [`tr[data-job-id="${id}"] .elapsed`, before],
      { timeout: TIMEOUT },
    );
  });
  await step('03-job-page-streams-events', async () => {
    await row.locator('a').first().click();
    await page.waitForURL(`**/jobs/${id}`);
    await page.locator('#status.running').waitFor();
    await page.locator('#events li.reasoning').first().waitFor();
    const seen = await page.locator('#events li').count();
    await page.waitForFunction((before) => document.querySelectorAll('#events li').length > before, seen,
      { timeout: TIMEOUT });
  });
  await step('04-cancel-cancels-the-job', async () => {
    await page.locator('#cancel').click();
    await page.locator('#cancel-message', { hasText: `job ${id} cancelled` }).waitFor();
    await page.locator('#status.cancelled').waitFor();
    await page.locator('#error-message', { hasText: 'cancel' }).waitFor();
    await page.locator('#cancel').waitFor({ state: 'hidden' });
    await page.locator('#connection', { hasText: 'ended' }).waitFor();
  });

  const phone = await context.newPage();
  watch(phone);
  await phone.setViewportSize({ width: 390, height: 844 });
  const onPhone = async (name, path, selector) => {
    await phone.goto(new URL(path, url).href);
    await phone.locator(selector).waitFor();
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    if (overflow > 0) throw new Error(`${path} is ${overflow}px wider than a phone`);
    await phone.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
    console.log(`ok ${name}`);
  };
  await onPhone('05-phone-list', '/', `tr[data-job-id="${id}"] .status.cancelled`);
  await onPhone('06-phone-job', `/jobs/${id}`, '#status.cancelled');

  await step('07-answer-as-markdown', async () => {
    await page.goto(new URL(`/jobs/${answered}`, url).href);
    await page.locator('#answer strong', { hasText: 'Done' }).waitFor();
    await page.locator('#answer code', { hasText: 'parse()' }).waitFor();
    const answer = page.locator('#answer');
    if (await answer.locator('img, script').count() > 0) throw new Error('HTML of the answer became elements');
    const text = await answer.textContent();
    if (!text.includes('<img src=x onerror=alert(1)>')) throw new Error(`the raw HTML is not shown as text: ${text}`);
  });

  await step('08-list-shows-the-worktrees-disk-use', async () => {
    await page.goto(new URL('/', url).href);
    await page.locator(`tr[data-job-id="${reviewed}"] .worktree`, { hasText: 'worktree' }).waitFor();
    await page.locator('#worktrees', { hasText: 'on disk' }).waitFor();
  });
  await step('09-job-page-shows-its-diff', async () => {
    await page.locator(`tr[data-job-id="${reviewed}"] a`).first().click();
    await page.waitForURL(`**/jobs/${reviewed}`);
    await page.locator('#isolation', { hasText: 'worktree' }).waitFor();
    await page.locator('#branch', { hasText: `cli-agent-mcp/${reviewed}` }).waitFor();
    await page.locator('#diff summary code', { hasText: 'notes.txt' }).waitFor();
    await page.locator('#diff .add', { hasText: '<b>applied</b> by the button' }).waitFor();
    if (await page.locator('#diff b').count() > 0) throw new Error('HTML of the diff became elements');
  });
  await step('10-apply-brings-it-into-the-workspace', async () => {
    await page.locator('#apply').click();
    await page.locator('#review-message', { hasText: 'Applied to the workspace' }).waitFor();
    await page.locator('#tree-state', { hasText: 'applied' }).waitFor();
    await page.locator('#apply').waitFor({ state: 'hidden' });
    await page.locator('#discard').waitFor({ state: 'hidden' });
  });
});
