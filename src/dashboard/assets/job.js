// One job: its record, its events as they arrive, its answer and error once it ends, and
// the cancel button.
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

const $ = (name) => document.getElementById(name);

function showJob(message) {
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
  $('cancel').hidden = FINISHED.has(job.status);
  if (job.error) {
    $('error').hidden = false;
    $('error-message').textContent = `${job.error.kind}: ${job.error.message}`;
    $('error-hint').textContent = job.error.hint ? `Hint: ${job.error.hint}` : '';
  }
  trouble('');
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
    case 'dropped': return `${event.events} events (${event.bytes} bytes) dropped here by the transcript size cap`;
    default: return JSON.stringify(event);
  }
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
    const failed = event.type === 'tool_finished' && !event.success ? 'failed' : null;
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

const feed = follow(`/jobs/${id}/events`, {
  job: showJob,
  lines: showLines,
  answer: showAnswer,
  trouble: (message) => trouble(message.message),
  end: () => { feed.close(); $('connection').textContent = 'ended'; $('connection').className = 'connection'; },
});

$('cancel').addEventListener('click', async () => {
  const button = $('cancel');
  const say = $('cancel-message');
  button.disabled = true;
  say.textContent = 'Asking the server running this job to cancel it…';
  try {
    const reply = await fetch(`/jobs/${id}/cancel`, { method: 'POST', headers: { 'x-csrf-token': csrf } });
    const text = await reply.text();
    let message = text;
    try { message = JSON.parse(text).message; } catch { /* a plain-text error */ }
    say.textContent = message;
  } catch (error) {
    say.textContent = `The dashboard did not answer: ${error}`;
  } finally {
    button.disabled = false;
  }
});

setInterval(() => {
  if (job && !FINISHED.has(job.status)) $('elapsed').textContent = elapsed(job, skew);
}, 1000);
