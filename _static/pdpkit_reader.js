/* pdpkit book: wide display equations.
 *
 * A display equation wider than the column scrolls inside its own box. This script finds such
 * boxes once MathJax has typeset the page (and again whenever a box changes size: a turned phone,
 * an opened dropdown) and marks them, so that pdpkit_reader.css can fade the content out at the
 * edge that hides more of it:
 *   pdpkit-wide        the box is narrower than its equation;
 *   pdpkit-more-right  part of the equation is hidden on the right (not scrolled to the end);
 *   pdpkit-more-left   part of it is hidden on the left (scrolled away from the start).
 * When the marks are in place, <html> carries data-pdpkit-reader="ready".
 *
 * Following a link to an anchor (#E-rw-6-signs, #thm-...): the browser scrolls to the target as
 * soon as the HTML is parsed, before MathJax has typeset the equations above it, so the target
 * drifts off screen as they take their height. Once typesetting and web fonts are done, the
 * script scrolls the target back into view, and for a few seconds puts it back whenever the
 * page's height changes again — unless the reader has scrolled in the meantime.
 */
(function () {
  "use strict";
  var EQUATION = 'mjx-container[display="true"]';
  var MARKS = ["pdpkit-wide", "pdpkit-more-left", "pdpkit-more-right"];
  var watched = typeof WeakSet === "function" ? new WeakSet() : null;

  function overflows(el) {
    return !!el && el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1;
  }

  /* The element that scrolls: the equation's own box, or the div.math around it. */
  function scrollBox(eq) {
    if (overflows(eq)) return eq;
    var parent = eq.parentElement;
    if (parent && parent.matches("div.math") && overflows(parent)) return parent;
    return null;
  }

  function edges(box) {
    var wide = overflows(box);
    box.classList.toggle("pdpkit-wide", wide);
    box.classList.toggle("pdpkit-more-left", wide && box.scrollLeft > 1);
    box.classList.toggle("pdpkit-more-right", wide && box.scrollLeft + box.clientWidth < box.scrollWidth - 1);
  }

  function mark(eq) {
    var box = scrollBox(eq);
    [eq, eq.parentElement].forEach(function (el) {
      if (el && el !== box) MARKS.forEach(function (m) { el.classList.remove(m); });
    });
    if (!box) return;
    edges(box);
    if (watched && !watched.has(box)) {
      watched.add(box);
      box.addEventListener("scroll", function () { edges(box); }, { passive: true });
    }
  }

  function markAll() {
    document.querySelectorAll(EQUATION).forEach(mark);
  }

  var readerMoved = false;
  ["wheel", "touchstart", "keydown", "mousedown"].forEach(function (kind) {
    window.addEventListener(kind, function () { readerMoved = true; }, { passive: true, once: true });
  });

  function anchorTarget() {
    var id = window.location.hash ? window.location.hash.slice(1) : "";
    if (!id) return null;
    try { id = decodeURIComponent(id); } catch (e) { /* keep it as written */ }
    return document.getElementById(id);
  }

  function keepAnchorInView() {
    var target = anchorTarget();
    if (target && !readerMoved) target.scrollIntoView({ block: "start", behavior: "instant" });  // not the theme's smooth scroll
  }

  /* Late changes of height above the target (a second typesetting pass, a collapsed cell, an
   * image) move it again: for a few seconds after the page is ready, every change of the
   * page's height puts it back, until the reader scrolls. */
  var SETTLE_MS = 4000;
  function settleAnchor() {
    if (!anchorTarget()) return;
    keepAnchorInView();
    if (typeof ResizeObserver !== "function") return;
    var observer = new ResizeObserver(function () {
      if (readerMoved) { observer.disconnect(); return; }
      keepAnchorInView();
    });
    observer.observe(document.body);
    window.setTimeout(function () { observer.disconnect(); }, SETTLE_MS);
  }

  function start() {
    markAll();
    settleAnchor();
    if (typeof ResizeObserver === "function") {
      var observer = new ResizeObserver(function (entries) {
        entries.forEach(function (entry) { mark(entry.target); });
      });
      document.querySelectorAll(EQUATION).forEach(function (eq) { observer.observe(eq); });
    }
    window.addEventListener("resize", markAll, { passive: true });
    if (document.fonts && document.fonts.ready) {
      document.fonts.ready.then(function () { markAll(); keepAnchorInView(); });
    }
    document.documentElement.setAttribute("data-pdpkit-reader", "ready");
  }

  window.PDPKIT_READER = { refresh: markAll };
  window.addEventListener("load", function () {
    var mj = window.MathJax;
    var typeset = mj && mj.startup && mj.startup.promise;
    (typeset ? typeset : Promise.resolve()).then(start, start);
  });
})();
