// copyhound admin: progressive enhancement only; every page works without it.
(function () {
  "use strict";
  // "Select all" boxes tick every box of their form.
  document.querySelectorAll("input[data-select-all]").forEach(function (all) {
    all.addEventListener("change", function () {
      all.form.querySelectorAll("input[name=ids]").forEach(function (box) { box.checked = all.checked; });
    });
  });
  // A page showing work in progress (a running crawl) reloads itself until it is done.
  var live = document.querySelector("[data-refresh]");
  if (live) {
    var seconds = Math.max(2, parseInt(live.getAttribute("data-refresh"), 10) || 5);
    window.setTimeout(function () { window.location.reload(); }, seconds * 1000);
  }
  // Enter on a chosen reason for dismissing presses its dismiss button.
  document.querySelectorAll("select[data-dismiss-with]").forEach(function (chooser) {
    chooser.addEventListener("keydown", function (e) {
      var button = document.getElementById(chooser.getAttribute("data-dismiss-with"));
      if (e.key === "Enter" && chooser.value && button) { e.preventDefault(); button.click(); }
    });
  });
  // Whether a key press is meant for the page: not typed into a field, no modifier. A held
  // key repeats, and its repeats reach the next page too: only moving may repeat, never an
  // action (holding c confirmed case after case as each page loaded).
  function pageKey(e) {
    var tag = (e.target && e.target.tagName) || "";
    if (e.ctrlKey || e.metaKey || e.altKey || tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") { return false; }
    if (e.repeat && e.key !== "j" && e.key !== "k") { e.preventDefault(); return false; }
    return true;
  }
  // A case's keys: c confirms, n confirms and opens the next case, d asks for the reason to
  // dismiss (then Enter dismisses), j/k move between the case's pages.
  var review = document.querySelector("form[data-keys]");
  if (review) {
    var pages = Array.prototype.slice.call(document.querySelectorAll("section[data-page]"));
    var at = -1;
    document.addEventListener("keydown", function (e) {
      if (!pageKey(e)) { return; }
      var button = null;
      switch (e.key) {
        case "c": button = document.getElementById("to-confirmed"); break;
        case "n": button = document.getElementById("confirm-next"); break;
        case "d":
          var reason = document.getElementById("dismiss-reason");
          if (reason) { reason.focus(); }
          break;
        case "j": case "k":
          if (pages.length === 0) { return; }
          if (at >= 0) { pages[at].classList.remove("current"); }
          at = Math.max(0, Math.min(pages.length - 1, at + (e.key === "j" ? 1 : -1)));
          pages[at].classList.add("current");
          pages[at].scrollIntoView({ block: "start" });
          break;
        default: return;
      }
      e.preventDefault();
      if (button) { button.click(); }
    });
    return;
  }
  // The review queue's keys: j/k move, x ticks, o or Enter opens, c/d confirm/dismiss the current case.
  var rows = Array.prototype.slice.call(document.querySelectorAll("tr[data-case]"));
  if (rows.length === 0) { return; }
  var current = 0;
  function show(i) {
    rows[current].classList.remove("current");
    current = Math.max(0, Math.min(rows.length - 1, i));
    rows[current].classList.add("current");
    rows[current].scrollIntoView({ block: "nearest" });
  }
  show(0);
  // One key acts on the current case alone: only its box is ticked, then the bulk button.
  function act(action) {
    var button = document.getElementById("bulk-" + action);
    var box = rows[current].querySelector("input[name=ids]");
    if (!button || !box) { return; }
    rows.forEach(function (row) { var b = row.querySelector("input[name=ids]"); if (b) { b.checked = false; } });
    box.checked = true;
    button.click();
  }
  document.addEventListener("keydown", function (e) {
    if (!pageKey(e)) { return; }
    switch (e.key) {
      case "j": show(current + 1); break;
      case "k": show(current - 1); break;
      case "x": var box = rows[current].querySelector("input[name=ids]"); if (box) { box.checked = !box.checked; } break;
      case "o": case "Enter": var link = rows[current].querySelector("a"); if (link) { window.location = link.href; } break;
      case "c": act("confirm"); break;
      case "d":
        // Dismissing needs a reason: the current case alone is ticked and the reason asked.
        rows.forEach(function (row) { var b = row.querySelector("input[name=ids]"); if (b) { b.checked = false; } });
        var ticked = rows[current].querySelector("input[name=ids]");
        if (ticked) { ticked.checked = true; }
        var why = document.getElementById("bulk-reason");
        if (why) { why.focus(); }
        break;
      default: return;
    }
    e.preventDefault();
  });
})();
