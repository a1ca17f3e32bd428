// toolgate console: small enhancements only; every page works without this file.
// Nothing here writes markup: strings from the trail are only ever set as text.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // Each time on the page is UTC; its title gives the reader's local time.
  for (const time of document.querySelectorAll("time[datetime]")) {
    const at = new Date(time.getAttribute("datetime"));
    if (!Number.isNaN(at.getTime())) {
      time.title = at.toLocaleString();
    }
  }

  // Pages that change on their own (the overview, pending approvals) reload every few
  // seconds, unless the reader is writing in one of their forms.
  const every = Number(document.body.dataset.refresh || 0);
  if (every > 0) {
    const busy = () =>
      [...document.querySelectorAll("input[type=text], textarea")].some(
        (field) => field === document.activeElement || field.value !== field.defaultValue,
      );
    setInterval(() => {
      if (!busy() && document.visibilityState === "visible") {
        window.location.reload();
      }
    }, every * 1000);
  }
});
