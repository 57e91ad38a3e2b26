/* Live timeline page (docs/timeline-live.md §3): show the connection's state (live / reconnecting /
   offline, or "session ended" with a sign-in link), hold new events while the reader is scrolled
   down ("N new — jump to live"), drop an event that arrives twice, reconnect from the last event
   shown (?after=), and keep relative times current. Without JavaScript the page is a server-rendered
   snapshot with "load older" links. Loaded after htmx and its ws extension (all deferred, in
   order); no inline script, no eval. */
(function () {
  "use strict";

  var PREFIX = "console-evt-";
  var SESSION_ENDED = 4401; // docs/wire-contract.md §C.1: an unauthenticated socket is closed with 4401
  var RECONNECT_MAX_MS = 5000;
  // The same coarse spans as the server's relative times (memory_panel panel_format.relative_ms).
  var SPANS = [[86400 * 365, "y"], [86400 * 30, "mo"], [86400, "d"], [3600, "h"], [60, "min"]];

  function seqOf(id) {
    if (!id || id.indexOf(PREFIX) !== 0) return 0;
    var n = parseInt(id.slice(PREFIX.length), 10);
    return isNaN(n) ? 0 : n;
  }

  function relative(ms, now) {
    var seconds = Math.floor((now - ms) / 1000);
    var ahead = seconds < 0;
    seconds = Math.abs(seconds);
    for (var i = 0; i < SPANS.length; i++) {
      if (seconds >= SPANS[i][0]) {
        var amount = Math.floor(seconds / SPANS[i][0]) + " " + SPANS[i][1];
        return ahead ? "in " + amount : amount + " ago";
      }
    }
    return "just now";
  }

  function refreshTimes(scope) {
    var now = Date.now();
    Array.prototype.forEach.call(scope.querySelectorAll("time[datetime]"), function (node) {
      var ms = Date.parse(node.getAttribute("datetime"));
      if (!isNaN(ms)) node.textContent = relative(ms, now);
    });
  }

  function connectionIndicator(root) {
    var box = document.getElementById("timeline-connection");
    var text = document.getElementById("timeline-connection-text");
    var signIn = document.getElementById("timeline-sign-in");
    var labels = {
      connecting: "Connecting…",
      live: "Live",
      reconnecting: "Reconnecting…",
      offline: "Offline — retrying; events missed meanwhile will follow",
      ended: "Your session has ended; live updates stopped."
    };
    var state = "connecting";
    var everOpen = false;
    function show(next) {
      state = next;
      box.hidden = false;
      box.setAttribute("data-state", next);
      text.textContent = labels[next];
      signIn.hidden = next !== "ended";
    }
    show("connecting");
    root.addEventListener("htmx:wsConnecting", function () {
      if (state === "ended") return;
      if (everOpen && state === "live") show("reconnecting");
    });
    root.addEventListener("htmx:wsOpen", function () {
      everOpen = true;
      show("live");
    });
    root.addEventListener("htmx:wsClose", function (event) {
      var close = event.detail && event.detail.event;
      if (close && close.code === SESSION_ENDED) {
        show("ended");
        return;
      }
      // The first loss of a live socket is "reconnecting"; an attempt that fails too is "offline".
      show(state === "live" ? "reconnecting" : "offline");
    });
    window.addEventListener("offline", function () { if (state !== "ended") show("offline"); });
  }

  // The count above the list (docs/timeline-live.md §6). The server counted the events up to the
  // page's newest one; each live event after it adds one, and rows from "load older" widen the
  // range shown. Formatted as the server formats it ("1–50 of 1,284 events", "more than 10,000").
  function counter(list) {
    var node = document.getElementById("timeline-count");
    if (!node) return function () {};
    var first = parseInt(node.getAttribute("data-first"), 10); // NaN: an older page past the cap
    var total = parseInt(node.getAttribute("data-total"), 10);
    var cap = parseInt(node.getAttribute("data-cap"), 10);
    function number(n) { return n.toLocaleString("en-US"); }
    return function (fresh) {
      var shown = list.children.length;
      total += fresh;
      if (!shown) return;
      var all = total > cap ? "more than " + number(cap) : number(total);
      node.textContent = isNaN(first)
        ? number(shown) + " older event" + (shown === 1 ? "" : "s") + " of " + all
        : number(first) + "–" + number(first + shown - 1) + " of " + all + (total === 1 ? " event" : " events");
      node.hidden = false;
    };
  }

  function init() {
    var root = document.getElementById("timeline");
    var list = document.getElementById("timeline-events");
    var jump = document.getElementById("timeline-jump");
    var count = document.getElementById("timeline-jump-count");
    if (!root || !list || !jump || !count) return;
    setInterval(function () { refreshTimes(list); }, 30000);
    var recount = counter(list);
    var socketUrl = root.getAttribute("data-socket-url");
    if (!socketUrl) {
      // An older page: history, not live; "load older" still widens the range shown.
      root.addEventListener("htmx:afterSettle", function () { recount(0); });
      return;
    }

    connectionIndicator(root);
    // Back off to at most a few seconds, so a restarted server is found again promptly.
    htmx.config.wsReconnectDelay = function (retryCount) {
      return Math.min(RECONNECT_MAX_MS, 500 * Math.pow(2, retryCount)) * (0.5 + Math.random() / 2);
    };

    var lastSeq = 0;
    var pending = 0;

    function markSeen(item) {
      item.setAttribute("data-seen", "1");
      lastSeq = Math.max(lastSeq, seqOf(item.id));
    }
    Array.prototype.forEach.call(list.children, markSeen);
    lastSeq = Math.max(lastSeq, seqOf(new URL(socketUrl, window.location.href).searchParams.get("after")));
    // Every event past this one arrives live (the page counted up to it); "load older" rows lie below.
    var frontier = lastSeq;

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

    // An event the server sent late, from its log (docs/timeline-live.md §4), may come after newer
    // ones: it goes below them, where a reload would show it.
    function place(item) {
      var next = item.nextElementSibling;
      while (next && seqOf(next.id) > seqOf(item.id)) next = next.nextElementSibling;
      if (next !== item.nextElementSibling) list.insertBefore(item, next);
    }

    function absorb() {
      var arrived = 0;
      Array.prototype.forEach.call(list.querySelectorAll("li:not([data-seen])"), function (item) {
        if (document.querySelectorAll('[id="' + item.id + '"]').length > 1) {
          item.remove(); // a replayed event the page already shows
          return;
        }
        // Rows from "load older" sit below the frontier; every event past it is new, even one that
        // arrives after a newer one.
        var fresh = seqOf(item.id) > frontier;
        if (fresh) {
          arrived += 1;
          place(item);
        }
        markSeen(item);
        refreshTimes(item);
        if (fresh && readerAway()) {
          item.classList.add("timeline-event--held");
          pending += 1;
        }
      });
      var empty = document.getElementById("timeline-empty");
      if (empty && list.children.length) empty.remove();
      count.textContent = String(pending);
      jump.hidden = pending === 0;
      recount(arrived);
    }

    root.addEventListener("htmx:wsAfterMessage", absorb);
    root.addEventListener("htmx:afterSettle", absorb);
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
