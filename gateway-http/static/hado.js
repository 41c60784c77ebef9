// A little help on top of pages that work without JavaScript.
document.addEventListener("DOMContentLoaded", () => {
  // Preselect the browser's time zone while the saved one is still the default.
  const zone = document.querySelector("input[name=tz][data-browser-zone=yes]");
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (zone && browserZone && zone.value !== browserZone) {
    zone.value = browserZone;
    // Say so: it is this browser's zone, not yet the saved one.
    const unsaved = document.getElementById("tz-unsaved");
    if (unsaved) unsaved.hidden = false;
  }

  // Copy the agent's connect line.
  for (const button of document.querySelectorAll("button[data-copy]")) {
    button.addEventListener("click", async () => {
      const text = document.getElementById(button.dataset.copy).textContent;
      await navigator.clipboard.writeText(text);
      button.textContent = button.dataset.copied;
    });
  }
});
