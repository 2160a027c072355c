// A question a job waits on (`--park-questions`), answered in a real browser.
// tests/real/delegate_questions.rs starts a server whose claude job waits on the person, and the
// dashboard, then runs this with (besides common.mjs's settings):
//   DASHBOARD_URL  the URL the dashboard printed (with its one-time token)
//   JOB_ID         the job that waits
//   ASKED          a piece of the question the page must show
import { env, inBrowser } from './common.mjs';

const url = env('DASHBOARD_URL');
const id = env('JOB_ID');
const asked = env('ASKED');

await inBrowser(async ({ page, step }) => {
  await step('01-list-shows-the-job-waiting', async () => {
    await page.goto(url);
    await page.locator(`tr[data-job-id="${id}"] .status.needs_input`).waitFor();
  });
  await step('02-job-page-shows-the-question', async () => {
    await page.goto(new URL(`/jobs/${id}`, url).href);
    await page.locator('#status.needs_input').waitFor();
    await page.locator('#question-section #question', { hasText: asked }).waitFor();
  });
  await step('03-allow-lets-the-job-go-on', async () => {
    await page.locator('#allow').click();
    await page.locator('#question-message', { hasText: 'allowed' }).waitFor();
    await page.locator('#question-section').waitFor({ state: 'hidden' });
    await page.locator('#status.completed').waitFor();
    await page.locator('#events li.question', { hasText: 'through the dashboard' }).waitFor();
  });
});
