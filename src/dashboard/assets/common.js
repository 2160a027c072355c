// Shared by the pages: formatting, DOM building (text only: never HTML from data), the feed.
'use strict';

const FINISHED = new Set(['completed', 'failed', 'cancelled', 'timed_out', 'interrupted']);

/** An element with attributes and children; strings become text nodes. */
function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value !== null && value !== undefined) node.setAttribute(name, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined) {
      node.append(typeof child === 'string' ? document.createTextNode(child) : child);
    }
  }
  return node;
}

/** 850ms, 42s, 7m 03s, 3h 02m. */
function duration(ms) {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const secs = Math.floor(ms / 1000);
  if (secs < 60) return `${secs}s`;
  const mins = Math.floor(secs / 60);
  if (mins < 60) return `${mins}m ${String(secs % 60).padStart(2, '0')}s`;
  return `${Math.floor(mins / 60)}h ${String(mins % 60).padStart(2, '0')}m`;
}

/** How long the job has run (or ran); `skew` is the server's clock minus ours. */
function elapsed(job, skew) {
  if (!job.started_ms) return job.status === 'queued' ? 'queued' : '–';
  const end = job.finished_ms || (Date.now() + skew);
  return duration(end - job.started_ms);
}

/** 512 B, 3.4 KB, 12.0 MB, 1.2 GB. */
function size(bytes) {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}

function tokens(usage) {
  if (!usage) return '–';
  const parts = [`${usage.input_tokens} in`, `${usage.output_tokens} out`];
  if (usage.cost_usd) parts.push(`$${usage.cost_usd.toFixed(4)}`);
  return parts.join(' · ');
}

function statusBadge(status) {
  return el('span', { class: `status ${status}` }, status.replace('_', ' '));
}

/** Follows an SSE feed; `handlers` maps message names to functions of the parsed data. */
function follow(url, handlers) {
  const connection = document.getElementById('connection');
  const source = new EventSource(url);
  const state = (text, cls) => { connection.textContent = text; connection.className = `connection ${cls}`; };
  source.onopen = () => state('live', 'live');
  source.onerror = () => state(source.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting…', 'down');
  for (const [name, handle] of Object.entries(handlers)) {
    source.addEventListener(name, (message) => handle(JSON.parse(message.data)));
  }
  return source;
}

/** The trouble banner: the store could not be read, a job is gone. */
function trouble(message) {
  const banner = document.getElementById('trouble');
  banner.textContent = message;
  banner.hidden = !message;
}
