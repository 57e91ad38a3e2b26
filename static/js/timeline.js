/* Live timeline page: hold new events while the reader is scrolled down ("N new — jump to live"),
   drop an event that arrives twice, and reconnect from the last event shown (?after=).
   Loaded after htmx and its ws extension (all deferred, in order); no inline script, no eval. */
(function () {
  "use strict";

  var PREFIX = "console-evt-";

  function seqOf(id) {
    if (!id || id.indexOf(PREFIX) !== 0) return 0;
    var n = parseInt(id.slice(PREFIX.length), 10);
    return isNaN(n) ? 0 : n;
  }

  function init() {
    var root = document.getElementById("timeline");
    var list = document.getElementById("timeline-events");
    var jump = document.getElementById("timeline-jump");
    var count = document.getElementById("timeline-jump-count");
    if (!root || !list || !jump || !count) return;

    var lastSeq = 0;
    var pending = 0;

    function markSeen(item) {
      item.setAttribute("data-seen", "1");
      lastSeq = Math.max(lastSeq, seqOf(item.id));
    }
    Array.prototype.forEach.call(list.children, markSeen);
    var initialAfter = new URL(root.getAttribute("data-socket-url"), window.location.href).searchParams.get("after");
    lastSeq = Math.max(lastSeq, seqOf(initialAfter));

    // Reconnect from the newest event shown, not from the page's original cursor.
    var originalCreate = htmx.createWebSocket;
    htmx.createWebSocket = function (url) {
      var target = new URL(url, window.location.href);
      if (lastSeq > 0) target.searchParams.set("after", PREFIX + lastSeq);
      return originalCreate ? originalCreate(target.toString()) : new WebSocket(target.toString());
    };

    // The reader is "away" once the newest event has scrolled out of view (a little slack so a
    // sub-pixel scroll position does not count).
    function readerAway() {
      return list.getBoundingClientRect().top < -24;
    }

    function release() {
      Array.prototype.forEach.call(list.querySelectorAll(".timeline-event--held"), function (item) {
        item.classList.remove("timeline-event--held");
      });
      pending = 0;
      jump.hidden = true;
    }

    function absorbNew() {
      var fresh = list.querySelectorAll("li:not([data-seen])");
      Array.prototype.forEach.call(fresh, function (item) {
        if (document.querySelectorAll('[id="' + item.id + '"]').length > 1) {
          item.remove(); // a replayed event the page already shows
          return;
        }
        markSeen(item);
        if (readerAway()) {
          item.classList.add("timeline-event--held");
          pending += 1;
        }
      });
      var empty = document.getElementById("timeline-empty");
      if (empty && list.children.length) empty.remove();
      count.textContent = String(pending);
      jump.hidden = pending === 0;
    }

    root.addEventListener("htmx:wsAfterMessage", absorbNew);
    jump.addEventListener("click", function () {
      release();
      window.scrollTo(0, 0);
    });
    window.addEventListener("scroll", function () {
      if (pending && !readerAway()) release();
    }, { passive: true });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
