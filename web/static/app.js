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
    var tag = (e.target && e.target.tagName) || "";
    if (e.ctrlKey || e.metaKey || e.altKey || tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") { return; }
    // A held key repeats, and its repeats reach the next page too: only moving may repeat,
    // never an action (holding c confirmed case after case as each page loaded).
    if (e.repeat && e.key !== "j" && e.key !== "k") { e.preventDefault(); return; }
    switch (e.key) {
      case "j": show(current + 1); break;
      case "k": show(current - 1); break;
      case "x": var box = rows[current].querySelector("input[name=ids]"); if (box) { box.checked = !box.checked; } break;
      case "o": case "Enter": var link = rows[current].querySelector("a"); if (link) { window.location = link.href; } break;
      case "c": act("confirm"); break;
      case "d": act("dismiss"); break;
      default: return;
    }
    e.preventDefault();
  });
})();
