/* Live panels (docs/timeline-live.md §2): a section marked data-live-refresh="<event types>" re-fetches
   itself over HTTP when one of those events arrives on the caller's event socket, so the page's own
   view (and its access checks) decides what is shown. Debounced; rows with a data-live-key the page
   did not show before are marked new; the reader's scroll position is kept. A live section inside
   another (the quarantine queue on the Pipeline page) is refreshed with it, never on its own: the
   page's fragment is the outer section. A section with data-live-running lists the steward runs the
   server found running; this script adds the ones it saw start since and drops the ones it saw end.
   Without JavaScript the page is the same, only not live. No inline script, no eval. */
(function () {
  "use strict";

  var DEBOUNCE_MS = 400;
  var RECONNECT_MS = 2000;
  var SESSION_ENDED = 4401;

  function keys(section) {
    var out = {};
    Array.prototype.forEach.call(section.querySelectorAll("[data-live-key]"), function (row) {
      out[row.getAttribute("data-live-key")] = true;
    });
    return out;
  }

  function LivePanel(section) {
    this.id = section.id;
    this.types = section.getAttribute("data-live-refresh").split(/\s+/);
    this.timer = null;
    this.started = {};
    this.completed = {};
  }

  LivePanel.prototype.section = function () {
    return document.getElementById(this.id);
  };

  LivePanel.prototype.wants = function (eventType) {
    return this.types.indexOf(eventType) >= 0;
  };

  LivePanel.prototype.schedule = function () {
    var panel = this;
    if (panel.timer) clearTimeout(panel.timer);
    panel.timer = setTimeout(function () { panel.timer = null; panel.refresh(); }, DEBOUNCE_MS);
  };

  LivePanel.prototype.refresh = function () {
    var panel = this;
    var before = keys(panel.section());
    var scrollX = window.scrollX, scrollY = window.scrollY;
    htmx.ajax("GET", window.location.pathname + window.location.search, {
      target: "#" + panel.id, swap: "outerHTML"
    }).then(function () {
      var section = panel.section();
      if (!section) return;
      Array.prototype.forEach.call(section.querySelectorAll("[data-live-key]"), function (row) {
        if (!before[row.getAttribute("data-live-key")]) row.classList.add("live-new");
      });
      panel.showRunning();
      window.scrollTo(scrollX, scrollY);
    });
  };

  // A run seen starting may have committed nothing yet (so the store cannot say it runs); a run
  // seen completing is over whatever the last render said.
  LivePanel.prototype.track = function (event) {
    var runId = event.data && event.data.run_id;
    if (!runId) return;
    if (event.event_type === "memory.dream.started" && !this.completed[runId]) this.started[runId] = true;
    if (event.event_type === "memory.dream.completed") {
      delete this.started[runId];
      this.completed[runId] = true;
    }
    this.showRunning();
  };

  LivePanel.prototype.showRunning = function () {
    var section = this.section();
    var box = section && section.querySelector("[data-live-running]");
    if (!box) return;
    var panel = this, shown = {};
    Array.prototype.forEach.call(box.querySelectorAll("[data-run-id]"), function (line) {
      var runId = line.getAttribute("data-run-id");
      if (panel.completed[runId]) box.removeChild(line);
      else shown[runId] = true;
    });
    Object.keys(panel.started).forEach(function (runId) {
      if (shown[runId]) return;
      var line = document.createElement("p");
      line.className = "live-running__run";
      line.setAttribute("data-run-id", runId);
      line.textContent = "Running now: steward dream " + runId;
      box.appendChild(line);
    });
    box.hidden = !box.querySelector("[data-run-id]");
  };

  function connect(panels, after, reopened) {
    var url = new URL("/ws/console/events/", window.location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    url.searchParams.set("batch", "1");
    if (after) url.searchParams.set("after", after);
    var socket = new WebSocket(url.toString());
    var last = after;
    socket.onopen = function () {
      document.documentElement.setAttribute("data-live-panels", "live");
      // Events may have happened while no socket was open: catch up once.
      if (reopened) panels.forEach(function (panel) { panel.schedule(); });
    };
    socket.onmessage = function (message) {
      var frame = JSON.parse(message.data);
      var events = frame.type === "events" ? frame.events : frame.type === "event" ? [frame.event] : [];
      events.forEach(function (event) {
        last = event.event_id;
        panels.forEach(function (panel) {
          if (!panel.wants(event.event_type)) return;
          panel.track(event);
          panel.schedule();
        });
      });
    };
    socket.onclose = function (close) {
      document.documentElement.setAttribute("data-live-panels", "offline");
      if (close.code === SESSION_ENDED) return; // signed out: the next page load asks to sign in
      setTimeout(function () { connect(panels, last, true); }, RECONNECT_MS);
    };
  }

  function init() {
    var sections = Array.prototype.filter.call(document.querySelectorAll("[data-live-refresh][id]"), function (section) {
      return !section.parentElement.closest("[data-live-refresh]");
    });
    if (!sections.length || !window.htmx || !window.WebSocket) return;
    connect(sections.map(function (section) { return new LivePanel(section); }), null, false);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
