"""Walking every page of the console in Chromium: the URL conf's named pages, what each page's console and network
said, and what does not fit the window (tests/browser/test_console_quiet.py, test_console_walk.py)."""

import re

from django.urls import URLPattern, URLResolver

# Not pages a person opens: machine endpoints, the proxy to Flower, the API (its docs page is walked), admin.
NOT_PAGES = re.compile(r"^(admin:|flower|metrics-prometheus$|healthz$|logout$|login$|api-(?!docs$))")


def named_patterns(patterns, namespace=""):
    """(name, pattern) of every named route, namespaces included ("ingestion:runs")."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            yield from named_patterns(pattern.url_patterns, inner)
        elif isinstance(pattern, URLPattern) and pattern.name:
            yield f"{namespace}{pattern.name}", pattern


class ConsoleWatch:
    """Console errors and warnings, page errors and failed requests, per page visited."""

    def __init__(self, page):
        self.problems: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("response", self._response)

    def _console(self, message):
        if message.type in ("error", "warning"):
            self.problems.append(f"console {message.type}: {message.text}")

    def _response(self, response):
        if response.status >= 400 and response.request.method == "GET":
            self.problems.append(f"{response.status} {response.url}")


# What does not fit: the page wider than the window, an element reaching past either side of it, a box whose
# content is cut or scrolls sideways, a control (link, button, field, label) whose text is cut or that lies outside
# its card or table cell, a button cut by a box around it. Drop-downs and dialogs that are closed take
# no room, so hidden elements (no box) are left out.
MISFITS = """() => {
  const width = document.documentElement.clientWidth;
  const seen = [];
  const name = (el) => {
    const text = (el.innerText || el.value || el.getAttribute("aria-label") || "").trim().split("\\n")[0].slice(0, 40);
    return `<${el.tagName.toLowerCase()}${[...el.classList].map((c) => "." + c).join("")}> "${text}"`;
  };
  if (document.documentElement.scrollWidth > width + 1) {
    seen.push(`the page is ${document.documentElement.scrollWidth} px wide in a ${width} px window`);
  }
  const reported = [];
  for (const el of document.body.querySelectorAll("*")) {
    const box = el.getBoundingClientRect();
    if (box.width <= 1 || box.height <= 1 || getComputedStyle(el).visibility === "hidden") continue;
    if (el.closest("dialog:not([open]), details:not([open]) > :not(summary), .visually-hidden")) continue;
    if (reported.some((outer) => outer.contains(el))) continue; // what is inside a misfit is said once, by it
    const before = seen.length;
    if (box.right > width + 1 || box.left < -1) {
      seen.push(`${name(el)} spans ${Math.round(box.left)}..${Math.round(box.right)} px of a ${width} px window`);
      reported.push(el);
      continue;
    }
    const style = getComputedStyle(el);
    const clips = style.overflowX !== "visible";
    if (clips && el.scrollWidth > el.clientWidth + 1 && !["TEXTAREA", "SELECT", "INPUT"].includes(el.tagName)) {
      seen.push(`${name(el)} holds ${el.scrollWidth} px in ${el.clientWidth} px (cut or scrolled sideways)`);
    }
    const font = parseFloat(style.fontSize);
    // On a phone a cell names its column above its value.
    const named = el.matches("td[data-label]") && getComputedStyle(el, "::before").content !== "none";
    const label = named ? el.dataset.label : el.matches("td") ? "" : el.innerText || "";
    if (el.matches("a, button, .button, summary, label, td[data-label]") && label.trim().length >= 4) {
      if (box.width < font * 2.5 && box.height > font * 3) {
        seen.push(`${name(el)} is squeezed to a letter a line (${Math.round(box.width)} px wide)`);
      }
    }
    if (el.matches("a, button, .button, input, select, summary, label")) {
      const blocky = style.display !== "inline";  // an inline box has no width of its own to cut
      const typed = ["TEXTAREA", "SELECT", "INPUT"].includes(el.tagName);  // a long value scrolls inside, as meant
      if (blocky && !typed && el.scrollWidth > el.clientWidth + 1) seen.push(`${name(el)}: its text is cut`);
      if (blocky && !typed && el.scrollHeight > el.clientHeight + 1 && style.overflowY !== "visible") {
        seen.push(`${name(el)}: its text is cut below`);
      }
    }
    if (el.matches("a, button, .button, input, select, summary, label, table, pre, img")) {
      const holder = el.parentElement && el.parentElement.closest(".card, td, th, dialog");
      let scrolls = false; // a list that scrolls up and down inside its card holds rows below the card's edge
      for (let up = el.parentElement; up && holder && up !== holder; up = up.parentElement) {
        scrolls = scrolls || ["auto", "scroll"].includes(getComputedStyle(up).overflowY);
      }
      if (holder) {
        const around = holder.getBoundingClientRect();
        const below = !scrolls && box.bottom > around.bottom + 1;
        if (box.left < around.left - 1 || box.right > around.right + 1 || below) {
          seen.push(`${name(el)} lies outside ${name(holder)}`);
        }
      }
    }
    if (el.matches("button, a.button, .button, input[type=submit]")) {
      for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
        if (getComputedStyle(up).overflowX === "visible" && getComputedStyle(up).overflowY === "visible") continue;
        const around = up.getBoundingClientRect();
        if (box.left < around.left - 1 || box.right > around.right + 1) {
          seen.push(`${name(el)} is cut by ${name(up)}`);
          break;
        }
      }
    }
    if (seen.length > before) reported.push(el);
  }
  return [...new Set(seen)].slice(0, 20);
}"""
# A clock time shown without its zone ("at 21:00" of which zone?): every time says UTC, or the reminder's zone.
UNZONED_TIMES = """() => [...document.querySelectorAll("main time")]
  .map((time) => time.innerText.trim())
  .filter((text) => /\\d:\\d\\d/.test(text) && !/UTC|[+-]\\d\\d\\b|\\b[A-Z]{3,4}\\b/.test(text))"""
