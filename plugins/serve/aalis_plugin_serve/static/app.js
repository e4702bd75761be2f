// The Aalis memory inspector. Plain DOM, no framework, no build step. Every string from the
// API goes through textContent (never as markup), so stored text can never become HTML.
// Clear, undo and forget cannot be taken back: each first names what it removes and asks
// (window.confirm), and only then sends "confirm": true, which the API requires.
"use strict";

const state = { current: null, offset: 0, pageSize: 50, types: [] };
const $ = (id) => document.getElementById(id);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function when(ms) {
  if (ms === null || ms === undefined) return "-";
  return new Date(ms).toLocaleString();
}

async function api(path, options) {
  const response = await fetch(path, Object.assign({ credentials: "same-origin" }, options));
  let body = null;
  try { body = await response.json(); } catch (_) { body = null; }
  if (!response.ok) {
    const message = body && body.error ? body.error : response.status + " " + response.statusText;
    throw new Error(message);
  }
  return body;
}

function post(path, body) {
  return api(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Aalis-Request": "1" },
    body: JSON.stringify(body || {}),
  });
}

const enc = (sid) => encodeURIComponent(sid);

async function loadSessions(reset) {
  if (reset) state.offset = 0;
  const page = await api("/api/sessions?offset=" + state.offset + "&limit=" + state.pageSize);
  const list = $("sessions");
  if (state.offset === 0) list.replaceChildren();
  for (const info of page.sessions) {
    const item = el("li");
    const button = el("button");
    button.dataset.session = info.session_id;
    button.append(el("span", "sid", info.session_id));
    button.append(el("span", "muted",
      info.active + " active · " + info.archived + " archived · " + when(info.last_timestamp)));
    if (info.session_id === state.current) button.setAttribute("aria-current", "true");
    button.addEventListener("click", () => select(info.session_id));
    item.append(button);
    list.append(item);
  }
  $("session-total").textContent = "(" + page.total + ")";
  const shown = state.offset + page.sessions.length;
  $("more-sessions").hidden = shown >= page.total;
}

async function loadTypes() {
  const result = await api("/api/clear-types");
  state.types = result.types;
  const box = $("clear-types");
  box.replaceChildren(el("legend", null, "Clear"));
  for (const type of state.types) {
    const label = el("label");
    const input = el("input");
    input.type = "checkbox";
    input.value = type.id;
    input.dataset.label = type.label;
    // Only the conversation itself is preselected: summaries, vectors and the rest are
    // cleared when someone ticks them, never by default.
    input.checked = type.id === "context";
    label.append(input, " " + type.label);
    box.append(label);
  }
}

function renderTimeline(data) {
  const summary = data.summary;
  $("summary-text").textContent = summary ? summary.text : "(no summary)";
  $("summary-meta").textContent = summary
    ? "by " + summary.model + ", covers " + when(summary.covered_from) + " – " +
      when(summary.covered_to) + ", updated " + when(summary.updated_at)
    : "";
  const parts = Object.entries(data.counts).map(([k, v]) => v + " " + k);
  $("counts").textContent = data.total + " messages: " + (parts.join(", ") || "none") +
    (data.truncated ? " (newest " + data.items.length + " shown)" : "");
  const list = $("timeline");
  list.replaceChildren();
  for (const item of data.items) {
    const m = item.message;
    const row = el("li", item.state);
    row.dataset.state = item.state;
    if (item.state === "divider") {
      row.textContent = (m.content || "compressed") + " · " + when(m.timestamp);
    } else {
      const label = m.role + (m.kind ? "/" + m.kind : "") + " · " + item.state + " · " + when(m.timestamp);
      row.append(el("div", "meta", label));
      let text = m.content || "";
      for (const call of m.tool_calls || []) text += (text ? "\n" : "") + "→ " + call.name + "(" + call.arguments + ")";
      row.append(el("div", "text", text || "(no content)"));
    }
    list.append(row);
  }
}

async function refresh() {
  if (state.current === null) return;
  const sid = state.current;
  try {
    const data = await api("/api/sessions/" + enc(sid) + "/full");
    if (sid === state.current) renderTimeline(data);
  } catch (error) {
    $("counts").textContent = error.message;
    $("timeline").replaceChildren();
    $("summary-text").textContent = "";
    $("summary-meta").textContent = "";
  }
}

async function select(sid) {
  state.current = sid;
  $("placeholder").hidden = true;
  $("session").hidden = false;
  $("session-title").textContent = sid;
  $("rows").hidden = true;
  $("recall-hits").hidden = true;
  for (const button of document.querySelectorAll("#sessions button")) {
    button.setAttribute("aria-current", String(button.dataset.session === sid));
  }
  await Promise.all([refresh(), loadPersons(), loadFacts()]);
}

async function loadPersons() {
  const sid = state.current;
  if (sid === null) return;
  const box = $("persons");
  const list = $("person-list");
  let persons = [];
  try {
    persons = (await api("/api/sessions/" + enc(sid) + "/persons")).persons;
  } catch (_) {
    persons = [];
  }
  if (sid !== state.current) return;
  list.replaceChildren();
  for (const person of persons) {
    const item = el("li");
    const button = el("button", "danger", "Forget " + person.person + "…");
    button.dataset.person = person.person;
    button.title = person.messages + " message(s) in this session";
    button.addEventListener("click", () => forget(person));
    item.append(button);
    list.append(item);
  }
  box.hidden = persons.length === 0;
}

// Facts (docs/host/facts.md): every fact of each person of the session, superseded ones
// too (their history); a current fact can be edited (the old value is kept) or retracted.
async function loadFacts() {
  const sid = state.current;
  if (sid === null) return;
  const box = $("facts-box");
  const list = $("facts");
  let persons = [];
  try {
    persons = (await api("/api/sessions/" + enc(sid) + "/facts")).persons;
  } catch (_) {
    persons = [];
  }
  if (sid !== state.current) return;
  list.replaceChildren();
  let count = 0;
  for (const person of persons) {
    if (person.facts.length === 0) continue;
    list.append(el("h3", null, person.person));
    const items = el("ul", "facts");
    for (const fact of person.facts) {
      count += 1;
      const item = el("li", fact.current ? "fact" : "fact muted");
      item.dataset.fact = fact.id;
      item.append(el("strong", null, fact.attribute + ": " + fact.value));
      const stateText = fact.current
        ? " current since " + when(fact.valid_from)
        : " superseded " + when(fact.superseded_at) + (fact.superseded_by ? " by " + fact.superseded_by : "");
      item.append(el("span", "muted", stateText + " · " + fact.extractor + " · from " + fact.sources.length + " message(s)"));
      item.title = fact.text;
      if (fact.current) {
        const edit = el("button", null, "Edit…");
        edit.addEventListener("click", () => editFact(fact));
        const retract = el("button", "danger", "Retract…");
        retract.addEventListener("click", () => retractFact(fact));
        item.append(edit, retract);
      }
      items.append(item);
    }
    list.append(items);
  }
  box.hidden = count === 0;
}

async function editFact(fact) {
  const value = window.prompt("New value of " + fact.attribute + " (the old one stays in the history):", fact.value);
  if (value === null || !value.trim()) return;
  try {
    await post("/api/facts/" + enc(fact.id) + "/edit", { value: value });
  } catch (error) {
    showRows("Edit failed", [{ source: "user-relation", success: false, message: error.message }]);
  }
  await loadFacts();
}

async function retractFact(fact) {
  if (!window.confirm("Retract " + fact.attribute + ": " + fact.value + "?\n\nThe value it replaced, if any, is current again.")) return;
  try {
    await post("/api/facts/" + enc(fact.id) + "/retract", { confirm: true });
  } catch (error) {
    showRows("Retract failed", [{ source: "user-relation", success: false, message: error.message }]);
  }
  await loadFacts();
}

function clip(text, limit) {
  const flat = String(text).replace(/\s+/g, " ").trim();
  return flat.length <= limit ? flat : flat.slice(0, limit - 1) + "…";
}

function showRows(title, rows) {
  const box = $("rows");
  box.replaceChildren(el("strong", null, title));
  for (const row of rows) {
    const line = el("div", "row" + (row.success ? "" : " failed"));
    line.textContent = (row.success ? "ok " : "FAILED ") + (row.type || "-") + ": " +
      row.message + " [" + row.source + "]";
    box.append(line);
  }
  box.hidden = false;
}

function pending(title) {
  // Replace the last result at once, so nobody mistakes it for the answer to this press.
  $("rows").replaceChildren(el("strong", null, title));
  $("rows").hidden = false;
}

async function compress() {
  pending("Compressing…");
  try {
    await post("/api/sessions/" + enc(state.current) + "/compress");
    showRows("Compressed", [{ success: true, type: "summary", message: "compression committed", source: "compression" }]);
  } catch (error) {
    showRows("Compression failed", [{ success: false, type: null, message: error.message, source: "compression" }]);
  }
}

async function clear() {
  const sid = state.current;
  const checked = Array.from(document.querySelectorAll("#clear-types input:checked"));
  const types = checked.map((i) => i.value);
  if (!types.length) {
    showRows("Nothing to clear", [{ success: false, type: null, message: "no type is selected", source: "page" }]);
    return;
  }
  const names = checked.map((i) => i.dataset.label + " (" + i.value + ")").join(", ");
  const question = "Clear session \"" + sid + "\"?\n\nThis removes: " + names +
    ".\nIt cannot be undone.";
  if (!window.confirm(question)) {
    showRows("Clear cancelled: nothing was removed", []);
    return;
  }
  pending("Clearing…");
  try {
    const result = await post("/api/sessions/" + enc(sid) + "/clear", { types, confirm: true });
    showRows(result.history_cleared ? "Cleared" : "Cleared (history kept)", result.rows);
  } catch (error) {
    showRows("Clear failed", [{ success: false, type: null, message: error.message, source: "aalis" }]);
  }
  await Promise.all([refresh(), loadSessions(true)]);
}

async function undo() {
  const sid = state.current;
  let turn;
  try {
    turn = (await api("/api/sessions/" + enc(sid) + "/undo")).messages;
  } catch (error) {
    showRows("Undo failed", [{ success: false, type: null, message: error.message, source: "memory" }]);
    return;
  }
  if (!turn.length) {
    showRows("Nothing to undo", [{ success: false, type: null, message: "session \"" + sid + "\" has no turn to undo", source: "memory" }]);
    return;
  }
  const lines = turn.map((m) => "  " + m.role + ": " + clip(m.content || "(tool call)", 160));
  const question = "Undo the last turn of session \"" + sid + "\"?\n\nThese " + turn.length +
    " message(s) will be deleted:\n" + lines.join("\n") + "\n\nIt cannot be undone.";
  if (!window.confirm(question)) {
    showRows("Undo cancelled: nothing was removed", []);
    return;
  }
  const expect = turn.map((m) => m.timestamp).filter((t) => t !== null && t !== undefined);
  pending("Undoing…");
  try {
    const result = await post("/api/sessions/" + enc(sid) + "/undo", { confirm: true, expect });
    showRows("Undone", [{ success: true, type: "context", message: result.deleted + " message(s) of the last turn deleted", source: "memory" }]);
  } catch (error) {
    showRows("Undo failed", [{ success: false, type: null, message: error.message, source: "memory" }]);
  }
}

async function forget(person) {
  const question = "Forget " + person.person + " everywhere?\n\nThis erases every message " +
    person.person + " wrote, in every session (their private sessions whole), with the " +
    "archives, vectors, summaries that quote them and what is known about them.\n" +
    "It cannot be undone.";
  if (!window.confirm(question)) {
    showRows("Forget cancelled: nothing was removed", []);
    return;
  }
  pending("Forgetting " + person.person + "…");
  try {
    const result = await post("/api/forget", { person: person.person, confirm: true });
    showRows(result.forgotten ? "Forgotten: " + result.person : "Forget incomplete: " + result.person, result.rows);
  } catch (error) {
    showRows("Forget failed", [{ success: false, type: null, message: error.message, source: "forget" }]);
  }
  await Promise.all([refresh(), loadPersons(), loadSessions(true)]);
}

async function recall(event) {
  event.preventDefault();
  const query = $("recall-query").value.trim();
  const list = $("recall-hits");
  if (!query) return;
  list.replaceChildren();
  list.hidden = false;
  try {
    const result = await api("/api/recall?session=" + enc(state.current) + "&q=" + encodeURIComponent(query));
    if (!result.hits.length) list.append(el("li", "muted", "nothing recalled"));
    for (const hit of result.hits) {
      const item = el("li", "hit");
      item.append(el("div", "meta", hit.session_id + " · " + hit.message.role + " · score " + hit.score.toFixed(3) + " · " + when(hit.message.timestamp)));
      item.append(el("div", "text", hit.message.content || ""));
      list.append(item);
    }
  } catch (error) {
    list.append(el("li", "failed", error.message));
  }
}

function listen() {
  const source = new EventSource("/api/events");
  source.addEventListener("ready", () => { $("live").textContent = "live"; $("live").classList.remove("off"); });
  source.addEventListener("error", () => { $("live").textContent = "offline"; $("live").classList.add("off"); });
  source.addEventListener("history_changed", (event) => {
    const data = JSON.parse(event.data);
    if (data.session_id === state.current) { refresh(); loadPersons(); }
    loadSessions(true);
  });
  source.addEventListener("resync", () => {
    refresh();
    if (state.current !== null) loadPersons();
    loadSessions(true);
  });
}

document.addEventListener("DOMContentLoaded", async () => {
  $("compress").addEventListener("click", compress);
  $("clear").addEventListener("click", clear);
  $("undo").addEventListener("click", undo);
  $("recall-form").addEventListener("submit", recall);
  $("more-sessions").addEventListener("click", () => { state.offset += state.pageSize; loadSessions(false); });
  listen();
  try {
    await Promise.all([loadSessions(true), loadTypes()]);
  } catch (error) {
    $("placeholder").textContent = error.message;
  }
});
