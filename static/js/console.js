// Console comforts for every page, from 'self' because the CSP forbids inline scripts:
// keyboard shortcuts for the lists (docs/daily-use.md §5), the header's realm switcher and the
// sideways-scroll hint on tables too wide for a phone (docs/daily-use.md §1).
// Without this script every page still works: links, forms and the switcher's button.
(function () {
  "use strict";

  // The rows j/k move through, on every list page: table rows (Records, Holdings, Pipeline, Ledger,
  // Knowledge, a tile's evidence), the quarantine queue's cards, dream cards and the timeline's
  // events (not those held back behind "jump to live").
  var ITEMS = [
    "main .table-wrap tbody tr:not(.load-more):not(.end-of-list):not(.group-row)",
    "li.queue-item",
    "ol.dream-cards > li",
    "li.timeline-event:not(.timeline-event--held)"
  ].join(", ");

  function typing(target) {
    return target instanceof HTMLElement &&
      (target.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName));
  }

  function items() {
    return Array.prototype.slice.call(document.querySelectorAll(ITEMS));
  }

  function currentIndex(list) {
    var active = document.activeElement;
    for (var i = 0; i < list.length; i++) {
      if (list[i].classList.contains("is-current") || list[i].contains(active)) {
        return i;
      }
    }
    return -1;
  }

  // Moving focuses the row's first link, so Enter opens it and the focus ring shows where it is; a
  // row without one focuses its summary (a dream card, a timeline event's raw event: Enter opens
  // it), else the row itself.
  function move(step) {
    var list = items();
    if (!list.length) {
      return;
    }
    var at = currentIndex(list);
    var next = at < 0 ? (step > 0 ? 0 : list.length - 1) : Math.min(Math.max(at + step, 0), list.length - 1);
    list.forEach(function (item) { item.classList.remove("is-current"); });
    list[next].classList.add("is-current");
    var target = list[next].querySelector("a[href], summary");
    if (!target) {
      target = list[next];
      target.setAttribute("tabindex", "-1");
    }
    target.focus();
    target.scrollIntoView({ block: "nearest" });
  }

  // "/" goes to the page's search box, else the first control of its filter form, else the
  // order it is listed in (the quarantine queue has no form), else the header's realm choice.
  function focusSearch() {
    var target = document.querySelector("main input[type=search]") ||
      document.querySelector("main form.filters input, main form.filters select, main form:not(.save-view) input," +
        " main form:not(.save-view) select") ||
      document.querySelector("main .order-switch a[aria-current], main .order-switch a") ||
      document.querySelector("form[data-realm-switch] select, form[data-realm-switch] input[type=search]");
    if (target) {
      target.focus();
      return true;
    }
    return false;
  }

  function shortcutsDialog() {
    return document.getElementById("shortcuts");
  }

  function toggleShortcuts() {
    var dialog = shortcutsDialog();
    if (!dialog || typeof dialog.showModal !== "function") {
      return;
    }
    if (dialog.open) {
      dialog.close();
    } else {
      dialog.showModal();
    }
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) {
      return;
    }
    if (typing(event.target)) {
      // Esc leaves the field "/" went to, so the list's keys work again without the mouse.
      if (event.key === "Escape" && event.target.closest("form.filters")) {
        event.target.blur();
      }
      return;
    }
    var dialog = shortcutsDialog();
    if (dialog && dialog.open && event.key !== "?") {
      return; // the dialog is modal: only Esc (native) and "?" act while it is open
    }
    if (event.key === "/") {
      if (focusSearch()) {
        event.preventDefault();
      }
    } else if (event.key === "j") {
      move(1);
    } else if (event.key === "k") {
      move(-1);
    } else if (event.key === "?") {
      event.preventDefault();
      toggleShortcuts();
    }
  });

  // docs/daily-use.md §1: on a phone a table wider than its box says it scrolls sideways; one that
  // fits says nothing. The hint is CSS on .table-wrap--overflows; without this script the fading
  // edges alone show which tables scroll. Measured again, once a frame at most, when the window
  // resizes, htmx swaps rows in (live panels, "load more") or a <details> opens or closes.
  // A table that scrolls is a named region in the tab order, so a keyboard can scroll it too
  // (WCAG 2.1.1; axe-core's scrollable-region-focusable); one that fits stays out of the way.
  function markOverflowingTables() {
    document.querySelectorAll(".table-wrap").forEach(function (wrap) {
      var overflows = wrap.scrollWidth > wrap.clientWidth + 1;
      wrap.classList.toggle("table-wrap--overflows", overflows);
      if (overflows) {
        wrap.setAttribute("tabindex", "0");
        wrap.setAttribute("role", "region");
        wrap.setAttribute("aria-label", tableName(wrap) + " (scrolls sideways)");
      } else if (wrap.getAttribute("role") === "region") {
        wrap.removeAttribute("tabindex");
        wrap.removeAttribute("role");
        wrap.removeAttribute("aria-label");
      }
    });
  }

  // The table's caption, else the nearest heading before it, else "Table".
  function tableName(wrap) {
    var caption = wrap.querySelector("caption");
    if (caption) {
      return caption.textContent.trim();
    }
    var headings = Array.prototype.filter.call(document.querySelectorAll("main h1, main h2, main h3"), function (h) {
      return h.compareDocumentPosition(wrap) & Node.DOCUMENT_POSITION_FOLLOWING;
    });
    return headings.length ? headings[headings.length - 1].textContent.trim() : "Table";
  }

  var remeasuring = false;
  function remeasureTables() {
    if (remeasuring) {
      return;
    }
    remeasuring = true;
    window.requestAnimationFrame(function () {
      remeasuring = false;
      markOverflowingTables();
    });
  }

  window.addEventListener("resize", remeasureTables);
  document.addEventListener("htmx:load", remeasureTables);
  document.addEventListener("toggle", remeasureTables, true); // toggle does not bubble

  document.addEventListener("DOMContentLoaded", function () {
    markOverflowingTables();
    var button = document.querySelector("[data-shortcuts-open]");
    if (button && shortcutsDialog()) {
      button.hidden = false;
      button.addEventListener("click", toggleShortcuts);
    }
    // The realm switcher returns to the page as it is now: htmx may have pushed a newer URL
    // than the one the header was rendered for. (It does not submit on change: arrowing
    // through a closed select would leave the page at every step.)
    document.querySelectorAll("form[data-realm-switch]").forEach(function (form) {
      var next = form.querySelector("input[name=next]");
      form.addEventListener("submit", function () {
        if (next) {
          next.value = window.location.pathname + window.location.search;
        }
      });
    });
  });
})();
