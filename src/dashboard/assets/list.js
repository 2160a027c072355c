// The list of runs and jobs: a snapshot, then every change, newest first; and the disk the
// worktrees kept for review take.
'use strict';

const jobs = new Map();
/** Each live worktree's disk use in bytes, by job id. */
let worktrees = new Map();
let skew = 0;

function row(job) {
  const link = el('a', { href: `/jobs/${job.id}` }, job.agent);
  const events = job.transcript.events + job.transcript.dropped_events;
  return el('tr', { 'data-job-id': job.id, 'data-status': job.status },
    el('td', { 'data-label': 'Status' }, statusBadge(job.status)),
    el('td', { 'data-label': 'Agent' }, el('span', {}, link, el('span', { class: 'id' }, job.id))),
    el('td', { 'data-label': 'Workspace', class: 'path' }, job.workspace),
    el('td', { 'data-label': 'Elapsed', class: 'elapsed' }, elapsed(job, skew)),
    el('td', { 'data-label': 'Now' },
      el('span', {},
        el('span', { class: 'progress' }, job.progress || '–'),
        el('span', { class: 'events' }, ` · ${events} events`),
        worktrees.has(job.id) ? el('span', { class: 'worktree' }, ` · worktree ${size(worktrees.get(job.id))}`) : null,
        el('span', { class: 'prompt' }, el('br'), job.prompt_preview))),
    el('td', { 'data-label': 'Tokens', class: 'tokens' }, tokens(job.usage)));
}

function render() {
  const body = document.querySelector('#jobs tbody');
  const sorted = [...jobs.values()].sort((a, b) => b.created_ms - a.created_ms);
  body.replaceChildren(...sorted.map(row));
  document.getElementById('empty').hidden = sorted.length > 0;
}

function take(message, fresh) {
  skew = message.now_ms - Date.now();
  if (fresh) {
    jobs.clear();
    const older = message.total - message.jobs.length;
    const note = document.getElementById('older');
    note.hidden = older <= 0;
    note.textContent = `${older} older jobs are not shown here: cli-agent-mcp jobs --limit ${message.total} lists them all.`;
  }
  for (const job of message.jobs) jobs.set(job.id, job);
  trouble('');
  render();
}

function takeWorktrees(message) {
  worktrees = new Map(message.jobs.map((job) => [job.id, job.bytes]));
  const note = document.getElementById('worktrees');
  const count = message.jobs.length;
  note.hidden = count === 0;
  const many = count === 1 ? 'worktree takes' : 'worktrees take';
  note.textContent = `Jobs' ${many} ${size(message.bytes)} on disk (${count}): discard those you are done with from their pages.`;
  render();
}

follow('/events', {
  snapshot: (message) => take(message, true),
  changed: (message) => take(message, false),
  worktrees: takeWorktrees,
  trouble: (message) => trouble(message.message),
});

// The running ones' clocks tick between messages.
setInterval(() => {
  for (const job of jobs.values()) {
    if (FINISHED.has(job.status)) continue;
    const cell = document.querySelector(`tr[data-job-id="${job.id}"] .elapsed`);
    if (cell) cell.textContent = elapsed(job, skew);
  }
}, 1000);
