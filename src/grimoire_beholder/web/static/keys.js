// grimoire-beholder web: keyboard navigation, and the token out of the address bar.
// "/" focuses the search box; j/k move through the items of a list (hits, books, sections)
// and Enter opens one; n/p follow the next/previous link; u goes up to the book or the list.
(function () {
  "use strict";
  var url = new URL(window.location.href);
  if (url.searchParams.has("token")) {  // the cookie keeps it; bookmarks stay clean
    url.searchParams.delete("token");
    window.history.replaceState(null, "", url.pathname + url.search + url.hash);
  }
  var current = -1;
  function items() { return Array.prototype.slice.call(document.querySelectorAll("[data-nav]")); }
  function move(step) {
    var all = items();
    if (!all.length) { return; }
    if (current >= 0 && all[current]) { all[current].classList.remove("current"); }
    current = Math.max(0, Math.min(all.length - 1, current + step));
    var item = all[current];
    item.classList.add("current");
    var link = item.querySelector("a");
    if (link) { link.focus(); }
    item.scrollIntoView({ block: "nearest" });
  }
  function follow(rel) {
    var link = document.querySelector('a[rel="' + rel + '"]');
    if (link) { window.location.href = link.href; }
  }
  document.addEventListener("keydown", function (event) {
    var tag = (event.target.tagName || "").toLowerCase();
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (tag === "input" || tag === "textarea" || tag === "select") {
      if (event.key === "Escape") { event.target.blur(); }
      return;
    }
    if (event.key === "/") {
      var box = document.querySelector("[data-focus-key]");
      if (box) { event.preventDefault(); box.focus(); box.select && box.select(); }
    } else if (event.key === "j") { move(1); }
    else if (event.key === "k") { move(-1); }
    else if (event.key === "n") { follow("next"); }
    else if (event.key === "p") { follow("prev"); }
    else if (event.key === "u") { follow("up"); }
  });
}());
