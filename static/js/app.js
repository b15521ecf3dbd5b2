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

// HTMX ignores failed requests by default; the operator must not be left wondering.
document.addEventListener("htmx:responseError", (event) => {
  window.alert(`Stashcast answered with an error (${event.detail.xhr.status}). Reload the page and try again.`);
});
document.addEventListener("htmx:sendError", () => {
  window.alert("Stashcast could not be reached. Check that it is running, then try again.");
});
