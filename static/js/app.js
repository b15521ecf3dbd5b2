// Dialogs arrive as HTML in #dialog-slot (with the page, or from an HTMX swap). Open each as a modal,
// and drop it from the page once closed, so the next request starts from an empty slot.
htmx.onLoad((root) => {
  const dialogs = root.matches("dialog[data-modal]") ? [root] : root.querySelectorAll("dialog[data-modal]");
  for (const dialog of dialogs) {
    dialog.addEventListener("close", () => dialog.remove());
    if (!dialog.open) dialog.showModal();
  }
});

// An expired login answers HTMX with the login page: go there instead of swapping it into a row.
document.addEventListener("htmx:beforeSwap", (event) => {
  const loginUrl = document.body.dataset.loginUrl;
  if (loginUrl && new URL(event.detail.xhr.responseURL).pathname === loginUrl) {
    event.detail.shouldSwap = false;
    window.location.assign(`${loginUrl}?next=${encodeURIComponent(window.location.pathname)}`);
  }
});

// A body the server refused to read (too large, too many fields) comes back as a message for the form
// that was sent: it goes at the top of that form, which keeps everything the operator typed.
document.addEventListener("htmx:beforeSwap", (event) => {
  const xhr = event.detail.xhr;
  if (xhr.getResponseHeader("X-Request-Refused") !== "true") return;
  event.detail.shouldSwap = false;
  event.detail.isError = false;
  const form = event.detail.elt.closest("form");
  if (!form) {
    window.alert(new DOMParser().parseFromString(xhr.responseText, "text/html").body.textContent);
    return;
  }
  form.querySelector(".request-error")?.remove();
  form.insertAdjacentHTML("afterbegin", xhr.responseText);
  form.querySelector(".request-error").scrollIntoView({ block: "center" });
});

// HTMX ignores failed requests by default; the operator must not be left wondering. Background polls
// (marked data-background: the bell's count, the Operations page) fail quietly and try again later.
const isBackground = (event) => event.detail.elt?.hasAttribute?.("data-background");
document.addEventListener("htmx:responseError", (event) => {
  if (isBackground(event)) return;
  window.alert(`Stashcast answered with an error (${event.detail.xhr.status}). Reload the page and try again.`);
});
document.addEventListener("htmx:sendError", (event) => {
  if (isBackground(event)) return;
  window.alert("Stashcast could not be reached. Check that it is running, then try again.");
});

// Bars and charts take their size from data attributes: the Content-Security-Policy blocks style="…",
// not styles set from a script file.
htmx.onLoad((root) => {
  const all = (selector) => [...(root.matches(selector) ? [root] : []), ...root.querySelectorAll(selector)];
  for (const bar of all("[data-bar-width]")) bar.style.width = `${Number(bar.dataset.barWidth)}%`;
  for (const bar of all("[data-bar-height]")) bar.style.height = `${Number(bar.dataset.barHeight)}%`;
  for (const part of all("[data-bar-grow]")) part.style.flexGrow = String(Number(part.dataset.barGrow));
});

// Drop-downs (<details data-dropdown>, e.g. the notification bell) say "dropdown:open" when opened (what
// they load then is in hx-trigger; a filter like toggle[open] would need eval, which the policy forbids),
// and close on a click elsewhere or Escape.
document.addEventListener(
  "toggle",
  (event) => {
    const dropdown = event.target;
    if (dropdown.matches?.("details[data-dropdown]") && dropdown.open) {
      dropdown.dispatchEvent(new CustomEvent("dropdown:open"));
    }
  },
  true, // toggle does not bubble
);
document.addEventListener("click", (event) => {
  for (const dropdown of document.querySelectorAll("details[data-dropdown][open]")) {
    if (!dropdown.contains(event.target)) dropdown.open = false;
  }
});
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  for (const dropdown of document.querySelectorAll("details[data-dropdown][open]")) {
    dropdown.open = false;
    dropdown.querySelector("summary")?.focus();
  }
});

// Browser notifications: once allowed (from the bell's panel), a notification newer than the last one
// announced pops up, and clicking it opens its page (a paused reminder: Resume or Cancel there).
const ANNOUNCED = "stashcast:announced";
function announceLatest() {
  const count = document.getElementById("bell-count");
  if (!count || !("Notification" in window)) return;
  const key = count.dataset.latestKey || "none";
  const announced = localStorage.getItem(ANNOUNCED);
  localStorage.setItem(ANNOUNCED, key);
  // The first page in this browser only remembers where things are; it announces nothing old.
  if (announced === null || announced === key || key === "none" || Notification.permission !== "granted") return;
  const shown = new Notification(count.dataset.latestTitle, { body: count.dataset.latestBody, tag: key });
  shown.addEventListener("click", () => {
    window.focus();
    window.location.href = count.dataset.latestUrl;
  });
}
document.addEventListener("DOMContentLoaded", announceLatest);
document.addEventListener("htmx:afterSettle", announceLatest);
document.addEventListener("htmx:afterSettle", () => {
  const offer = document.querySelector("[data-browser-notifications]");
  if (offer && "Notification" in window && Notification.permission === "default") offer.hidden = false;
});
document.addEventListener("click", (event) => {
  const offer = event.target.closest?.("[data-browser-notifications]");
  if (!offer) return;
  Notification.requestPermission().then(() => {
    offer.hidden = true;
  });
});

// A filter form (data-drop-empty) sends only the filters set: the pushed URL stays short and shareable.
document.addEventListener("htmx:configRequest", (event) => {
  if (!event.detail.elt.closest?.("form[data-drop-empty]")) return;
  const data = event.detail.formData;
  for (const [name, value] of [...data.entries()]) {
    if (value === "") data.delete(name);
  }
});

// On a phone a table's rows stack (app.css): each cell shows its column's name, taken from the header here so the
// templates keep one heading per column. Rows swapped in later get theirs too.
htmx.onLoad((root) => {
  const tables = new Set([
    ...(root.closest ? [root.closest("table.table")] : []),
    ...(root.querySelectorAll ? root.querySelectorAll("table.table") : []),
  ]);
  for (const table of tables) {
    if (!table) continue;
    const headings = [...table.querySelectorAll("thead th")].flatMap((th) =>
      Array(th.colSpan || 1).fill(th.textContent.trim()),
    );
    for (const row of table.querySelectorAll("tbody tr")) {
      let column = 0;
      for (const cell of row.children) {
        // A cell across every column ("Nothing yet.") is a sentence of its own, not a value of its first column.
        const across = cell.colSpan > 1 && cell.colSpan >= headings.length;
        if (cell.tagName === "TD" && headings[column] && !across && !cell.hasAttribute("data-label")) {
          cell.dataset.label = headings[column];
        }
        column += cell.colSpan || 1;
      }
    }
  }
});

// A flash announced what was starting ("Ingesting … now", "Run #2 is sending…"). When the page's live part stops
// polling (HTTP 286: the run is over), the banner shows how it ended, so the announcement goes; errors stay.
document.addEventListener("htmx:afterRequest", (event) => {
  if (event.detail.xhr?.status !== 286) return;
  for (const flash of document.querySelectorAll(".messages .alert:not(.alert--error)")) flash.remove();
});

// A "Copy" button copies the field it names (data-copy: its id), e.g. a new API token's secret shown once.
document.addEventListener("click", async (event) => {
  const button = event.target.closest("[data-copy]");
  if (!button) return;
  const field = document.getElementById(button.dataset.copy);
  if (!field) return;
  field.select();
  try {
    await navigator.clipboard.writeText(field.value);
    button.textContent = button.dataset.copied || "Copied";
  } catch {
    button.textContent = "Press Ctrl+C";
  }
});
