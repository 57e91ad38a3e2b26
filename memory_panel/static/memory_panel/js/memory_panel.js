// Memory panel: "Copy JSON" buttons. Loaded from 'self' because the CSP forbids inline scripts.
// Without this script the buttons stay hidden and the JSON is still there to select by hand.
(function () {
  "use strict";

  function wire(root) {
    root.querySelectorAll("button[data-copy-target]").forEach(function (button) {
      if (button.dataset.copyWired || !navigator.clipboard) {
        return;
      }
      button.dataset.copyWired = "1";
      button.hidden = false;
      button.addEventListener("click", function () {
        var source = document.getElementById(button.dataset.copyTarget);
        var status = button.parentElement.querySelector(".copy-status");
        navigator.clipboard.writeText(source ? source.textContent : "").then(
          function () { if (status) { status.textContent = "Copied."; } },
          function () { if (status) { status.textContent = "Copy failed: select the text instead."; } }
        );
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () { wire(document); });
  // htmx swaps the biography in without a page load; wire the new buttons too.
  document.addEventListener("htmx:afterSettle", function (event) { wire(event.target); });
})();
