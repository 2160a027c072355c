// One job: its record, its events as they arrive, its answer and error once it ends, its
// changes and diff (rendered by the server), the question it waits on with the allow and
// decline buttons, and the cancel, apply, discard and revert buttons.
'use strict';

const id = document.querySelector('meta[name="job"]').content;
const csrf = document.querySelector('meta[name="csrf"]').content;
/** The most event rows kept on the page; older ones are dropped from it (not from the store). */
const MAX_ROWS = 2000;
let job = null;
let skew = 0;
let events = 0;
let dropped = 0;
/** The latest usage a running job's events reported (its record has usage once it ends). */
let usage = null;
/** The model the CLI said it runs, when the job asked for none. */
let model = null;
/** The buttons of the changes section, named as their routes. */
const ACTIONS = ['apply', 'discard', 'revert'];
/** Numbers the reads of the changes: only the latest is shown. */
let reviews = 0;
/** The number of the question the job waits on the person for, while it waits. */
let waitingFor = null;

const $ = (name) => document.getElementById(name);

function showJob(message) {
  if (!job) loadReview();
  job = message.job;
  skew = message.now_ms - Date.now();
  $('status').replaceWith(Object.assign(statusBadge(job.status), { id: 'status' }));
  $('agent').textContent = `${job.agent} (${job.origin}, ${job.permission})`;
  $('workspace').textContent = job.workspace;
  $('elapsed').textContent = elapsed(job, skew);
  $('progress').textContent = job.progress || '–';
  $('tokens').textContent = tokens(job.usage || usage);
  $('model').textContent = job.model || model || '–';
  $('session').textContent = job.session_id || '–';
  $('prompt').textContent = job.prompt_preview;
  // What the person let this call past when asked: the server's bounds, in their words.
  $('allowed-past-label').hidden = $('allowed-past').hidden = !job.allowed_past;
  $('allowed-past').textContent = job.allowed_past || '';
  $('cancel').hidden = FINISHED.has(job.status);
  showQuestion(job.status === 'needs_input' ? job.waiting_for : null);
  if (job.error) {
    $('error').hidden = false;
    $('error-message').textContent = `${job.error.kind}: ${job.error.message}`;
    $('error-hint').textContent = job.error.hint ? `Hint: ${job.error.hint}` : '';
  }
  trouble('');
}

/** The question the job waits on, with its buttons; hidden when it waits on none. */
function showQuestion(parked) {
  $('question-section').hidden = !parked;
  if (!parked || parked.number === waitingFor) return;
  waitingFor = parked.number;
  $('question').textContent = parked.asked;
  $('question-message').textContent = '';
  for (const button of [$('allow'), $('decline')]) button.disabled = false;
}

/** The event's kind and one line saying what it was. */
function describe(event) {
  switch (event.type) {
    case 'session_started': return `session ${event.session_id}${event.model ? ` (${event.model})` : ''}`;
    case 'text': return event.text;
    case 'reasoning': return event.text;
    case 'tool_started': return event.command ? `running \`${event.command}\`` : `using ${event.name}`;
    case 'tool_finished': {
      const what = event.command || event.name;
      if (event.success) return `finished \`${what}\``;
      return event.exit_code === null || event.exit_code === undefined
        ? `\`${what}\` failed` : `\`${what}\` failed (exit ${event.exit_code})`;
    }
    case 'usage': return tokens(event);
    case 'notice': return `${event.level}: ${event.message}`;
    case 'turn_completed': return 'turn completed';
    case 'turn_failed': return `turn failed: ${event.message}`;
    case 'turn_aborted': return `turn aborted: ${event.message}`;
    case 'question': return question(event);
    case 'dropped': return `${event.events} events (${event.bytes} bytes) dropped here by the transcript size cap`;
    default: return JSON.stringify(event);
  }
}

/** A question put to the person on the job's behalf, its answer, and who gave it. */
function question(event) {
  const asked = event.about === 'tool_permission'
    ? `the agent asks to use ${event.tool} ${event.input}` : `the call goes past: ${event.bounds}`;
  const answer = event.answer.replaceAll('_', ' ');
  const by = event.answered_by ? ` by the person, through ${event.answered_by}` : ' by the server';
  return `${asked} → ${answer}${by}${event.why ? ` (${event.why})` : ''}`;
}

function showLines(message) {
  const list = $('events');
  const rows = [];
  for (const line of message.text.split('\n')) {
    if (!line) continue;
    let event;
    try { event = JSON.parse(line); } catch { event = { type: 'unreadable', text: line }; }
    if (event.type === 'usage') usage = event;
    if (event.type === 'session_started' && event.model) model = event.model;
    const failed = (event.type === 'tool_finished' && !event.success)
      || (event.type === 'question' && event.answer !== 'allowed') ? 'failed' : null;
    rows.push(el('li', { class: [event.type, failed].filter(Boolean).join(' ') },
      el('span', { class: 'kind' }, event.type), el('span', { class: 'text' }, describe(event))));
    events += 1;
  }
  list.append(...rows);
  while (list.childElementCount > MAX_ROWS) {
    list.firstElementChild.remove();
    dropped += 1;
  }
  $('event-count').textContent = `(${events})`;
  if (job && !job.usage) $('tokens').textContent = tokens(usage);
  if (job && !job.model && model) $('model').textContent = model;
  const note = $('events-note');
  note.hidden = dropped === 0;
  note.textContent = `The ${dropped} oldest events are not shown here: cli-agent-mcp jobs result --transcript ${id} prints them all.`;
}

function showAnswer(message) {
  $('answer-section').hidden = false;
  if (message.chars === 0) {
    $('answer').replaceChildren(el('p', { class: 'note' }, 'The job gave no answer.'));
  } else {
    // Rendered by the server from markdown, raw HTML in it escaped: safe to insert.
    $('answer').innerHTML = message.html;
  }
  const note = $('answer-note');
  note.hidden = message.shown_chars >= message.chars;
  note.textContent = `The first ${message.shown_chars} of ${message.chars} characters: cli-agent-mcp jobs result ${id} prints the whole answer.`;
}

/** POSTs to the dashboard with the page's CSRF value: the reply's JSON, or its text as the message. */
async function post(path) {
  try {
    const reply = await fetch(path, { method: 'POST', headers: { 'x-csrf-token': csrf } });
    const text = await reply.text();
    try { return JSON.parse(text); } catch { return { result: 'refused', message: text }; }
  } catch (error) {
    return { result: 'refused', message: `The dashboard did not answer: ${error}` };
  }
}

/** Reads the job's changes again and shows them. */
async function loadReview() {
  const ticket = ++reviews;
  try {
    const reply = await fetch(`/jobs/${id}/review`);
    if (!reply.ok) return trouble(await reply.text());
    const view = await reply.json();
    if (ticket === reviews) showReview(view);
  } catch (error) {
    trouble(`The dashboard did not answer: ${error}`);
  }
}

function showReview(view) {
  $('review-section').hidden = !view.isolation && !view.not_tracked;
  $('isolation').textContent = view.isolation || 'none';
  $('worktree').textContent = view.worktree || (view.isolation === 'worktree' ? 'removed' : '–');
  $('branch').textContent = view.branch || '–';
  $('tree-state').textContent = view.state ? view.state.replace('_', ' ') : '–';
  $('not-tracked').hidden = !view.not_tracked;
  $('not-tracked').textContent = view.not_tracked || '';
  // Rendered by the server, every character of the diff escaped: safe to insert.
  $('diff').innerHTML = view.html;
  for (const action of ACTIONS) $(action).hidden = !view.actions.includes(action);
}

const feed = follow(`/jobs/${id}/events`, {
  job: showJob,
  lines: showLines,
  answer: showAnswer,
  trouble: (message) => trouble(message.message),
  end: () => {
    feed.close();
    $('connection').textContent = 'ended';
    $('connection').className = 'connection';
    loadReview();
  },
});

$('cancel').addEventListener('click', async () => {
  const button = $('cancel');
  button.disabled = true;
  $('cancel-message').textContent = 'Asking the server running this job to cancel it…';
  $('cancel-message').textContent = (await post(`/jobs/${id}/cancel`)).message;
  button.disabled = false;
});

for (const verdict of ['allow', 'decline']) {
  $(verdict).addEventListener('click', async () => {
    for (const button of [$('allow'), $('decline')]) button.disabled = true;
    const reply = await post(`/jobs/${id}/questions/${waitingFor}/${verdict}`);
    const say = $('question-message');
    say.textContent = reply.message;
    const refused = reply.result !== 'answered';
    say.classList.toggle('refused', refused);
    // A refusal (the dashboard did not answer, say) leaves the question open to answer again.
    if (refused && reply.result !== 'already_settled') {
      for (const button of [$('allow'), $('decline')]) button.disabled = false;
    }
  });
}

for (const action of ACTIONS) {
  $(action).addEventListener('click', async () => {
    if (action === 'discard' && !window.confirm('Remove the worktree and the branch with this job\'s changes?')) return;
    const buttons = ACTIONS.map($);
    for (const button of buttons) button.disabled = true;
    const say = $('review-message');
    say.className = 'review-message';
    say.textContent = `Asking for ${action}…`;
    const reply = await post(`/jobs/${id}/${action}`);
    say.textContent = reply.message;
    say.classList.toggle('refused', reply.result === 'refused');
    $('conflicts').replaceChildren(...(reply.conflicts || []).map((file) => el('li', {}, file)));
    for (const button of buttons) button.disabled = false;
    await loadReview();
  });
}

setInterval(() => {
  if (job && !FINISHED.has(job.status)) $('elapsed').textContent = elapsed(job, skew);
}, 1000);
