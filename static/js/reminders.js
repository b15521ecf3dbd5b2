// The reminder form: search and select-all for its groups, crontab presets, and uploading a file as soon as it
// is chosen. Listeners sit on the document, so a form HTMX swaps in needs no setup. Without this script the form
// still works: every group is listed, the Upload button uploads, the crontab is typed.

const TARGET = 'input[name="targets"]';

function groupOptions(section) {
  return [...section.querySelectorAll("[data-group-option]")];
}

function refreshGroupCounts(section) {
  const options = groupOptions(section);
  const shown = options.filter((option) => !option.hidden);
  const checked = (option) => option.querySelector(TARGET).checked;
  const selected = options.filter(checked).length;
  const shownSelected = shown.filter(checked).length;

  const count = section.querySelector("[data-selected-count]");
  if (count) {
    const number = document.createElement("strong");
    number.textContent = String(selected);
    count.replaceChildren(number, ` of ${options.length} selected`);
  }
  const selectAll = section.querySelector("[data-select-all]");
  if (selectAll) {
    selectAll.checked = shown.length > 0 && shownSelected === shown.length;
    selectAll.indeterminate = shownSelected > 0 && shownSelected < shown.length;
  }
  const noMatch = section.querySelector("[data-no-match]");
  if (noMatch) noMatch.hidden = shown.length > 0 || options.length === 0;
}

// Search filters the list as the operator types; "Select all shown" then picks what the search left.
document.addEventListener("input", (event) => {
  const search = event.target.closest?.("[data-group-search]");
  if (search) {
    const section = search.closest("section");
    const words = search.value.trim().toLowerCase();
    for (const option of groupOptions(section)) {
      option.hidden = words !== "" && !option.dataset.title.includes(words);
    }
    refreshGroupCounts(section);
    return;
  }
  // A field whose only rule is "filled" (the name, a part's text): its message goes once it is filled, not at the
  // next step. Other messages stay until the server has seen the new value.
  const filled = event.target.closest?.('[data-error-clears="filled"]');
  if (filled && filled.value.trim() !== "") {
    const field = filled.closest(".has-error");
    if (field) {
      for (const error of field.querySelectorAll(".field-error")) error.remove();
      field.classList.remove("has-error");
    }
  }
  // A crontab typed by hand: the preset list says which preset it is, or "Custom…".
  const crontab = event.target;
  if (crontab.id) {
    const preset = document.querySelector(`[data-crontab-preset][data-crontab-input="${crontab.id}"]`);
    if (preset) {
      const typed = crontab.value.trim().split(/\s+/).join(" ");
      preset.value = [...preset.options].some((option) => option.value === typed) ? typed : "";
    }
  }
});

// Enter in the search box must not submit the form (that would go to the next step).
document.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && event.target.matches?.("[data-group-search]")) event.preventDefault();
});

// Capture phase: these run before HTMX reads the form for the estimate, which listens to the same change.
document.addEventListener(
  "change",
  (event) => {
    const field = event.target;
    if (field.matches?.("[data-select-all]")) {
      const section = field.closest("section");
      for (const option of groupOptions(section)) {
        if (!option.hidden) option.querySelector(TARGET).checked = field.checked;
      }
      refreshGroupCounts(section);
    } else if (field.matches?.(TARGET)) {
      refreshGroupCounts(field.closest("section"));
    } else if (field.matches?.("[data-crontab-preset]")) {
      const input = document.getElementById(field.dataset.crontabInput);
      if (input && field.value) input.value = field.value;
    } else if (field.matches?.("[data-autoupload]") && field.files.length) {
      field.closest(".upload")?.querySelector("[data-upload-button]")?.click();
    }
  },
  true,
);
