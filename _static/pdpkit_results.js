/* pdpkit book: Results at a glance. Filters by source and by status, and on a narrow screen the details of a
   row on a tap. Without this script every row and every detail is shown. */
(function () {
  "use strict";

  function init() {
    var tables = Array.prototype.slice.call(document.querySelectorAll("table.pdpkit-results"));
    if (!tables.length) return;
    document.documentElement.classList.add("pdpkit-results-js");
    var rows = [];
    var sources = [];
    tables.forEach(function (table) {
      var section = table.closest("section");
      var heading = section ? section.querySelector("h1, h2, h3") : null;
      var src = "";
      table.classList.forEach(function (c) { if (c.indexOf("pdpkit-src-") === 0) src = c.slice(11); });
      var name = heading ? heading.textContent.replace(/[\u00b6#]\s*$/, "").trim() : src;
      sources.push({src: src, name: name, section: section});
      table.querySelectorAll("tr.pdpkit-result").forEach(function (tr) {
        var status = "";
        tr.classList.forEach(function (c) { if (c.indexOf("pdpkit-status-") === 0) status = c.slice(14); });
        var statusText = (tr.querySelector("td.pdpkit-col-status") || {}).textContent || status;
        rows.push({tr: tr, src: src, status: status, statusText: statusText.trim(), section: section});
        addToggle(tr);
      });
    });
    addFilters(tables[0], rows, sources);
    openTarget(rows);
    window.addEventListener("hashchange", function () { openTarget(rows); });
  }

  function setOpen(tr, open) {
    tr.classList.toggle("pdpkit-open", open);
    var button = tr.querySelector("button.pdpkit-results-toggle");
    if (button) button.setAttribute("aria-expanded", open ? "true" : "false");
  }

  function addToggle(tr) {
    var cell = tr.querySelector("td.pdpkit-col-num");
    if (!cell) return;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "pdpkit-results-toggle";
    button.setAttribute("aria-expanded", "false");
    var label = cell.textContent.trim();
    var nameCell = tr.querySelector("td.pdpkit-col-name a, td.pdpkit-col-name");
    button.setAttribute("aria-label", "Details of " + label + (nameCell ? ": " + nameCell.textContent.trim() : ""));
    button.textContent = "\u25b8";
    button.addEventListener("click", function (ev) {
      ev.stopPropagation();
      setOpen(tr, !tr.classList.contains("pdpkit-open"));
    });
    cell.insertBefore(button, cell.firstChild);
    // a tap anywhere on the row's line (not on a link) opens or closes it
    tr.addEventListener("click", function (ev) {
      if (ev.target.closest("a, button, input, select, summary")) return;
      var cellHit = ev.target.closest("td");
      if (cellHit && !/pdpkit-col-(num|name|status)/.test(cellHit.className) && tr.classList.contains("pdpkit-open")) {
        return;  // reading or selecting in the details does not close them
      }
      setOpen(tr, !tr.classList.contains("pdpkit-open"));
    });
  }

  function option(value, text) {
    var o = document.createElement("option");
    o.value = value;
    o.textContent = text;
    return o;
  }

  function addFilters(firstTable, rows, sources) {
    var firstSection = sources[0] && sources[0].section;
    if (!firstSection || !firstSection.parentNode) return;
    var form = document.createElement("form");
    form.className = "pdpkit-results-filters";
    form.setAttribute("role", "search");
    form.setAttribute("aria-label", "Filter the results");
    form.addEventListener("submit", function (ev) { ev.preventDefault(); });

    var srcLabel = document.createElement("label");
    srcLabel.textContent = "Source";
    var srcSelect = document.createElement("select");
    srcSelect.name = "source";
    srcSelect.appendChild(option("", "all sources"));
    sources.forEach(function (s) { srcSelect.appendChild(option(s.src, s.name)); });
    srcLabel.appendChild(srcSelect);

    var stLabel = document.createElement("label");
    stLabel.textContent = "Status";
    var stSelect = document.createElement("select");
    stSelect.name = "status";
    stSelect.appendChild(option("", "any status"));
    var seen = {};
    rows.forEach(function (r) {
      if (!seen[r.status]) {
        seen[r.status] = true;
        stSelect.appendChild(option(r.status, r.statusText));
      }
    });
    stLabel.appendChild(stSelect);

    var count = document.createElement("output");
    count.setAttribute("aria-live", "polite");

    form.appendChild(srcLabel);
    form.appendChild(stLabel);
    form.appendChild(count);
    firstSection.parentNode.insertBefore(form, firstSection);

    function apply() {
      var src = srcSelect.value, status = stSelect.value, shown = 0;
      var visibleIn = new Map();
      rows.forEach(function (r) {
        var show = (!src || r.src === src) && (!status || r.status === status);
        r.tr.hidden = !show;
        if (show) shown += 1;
        if (r.section) visibleIn.set(r.section, (visibleIn.get(r.section) || 0) + (show ? 1 : 0));
      });
      visibleIn.forEach(function (n, section) { section.classList.toggle("pdpkit-results-empty", n === 0); });
      count.textContent = shown === rows.length ? rows.length + " results" : shown + " of " + rows.length + " results";
    }
    srcSelect.addEventListener("change", apply);
    stSelect.addEventListener("change", apply);
    form._pdpkitApply = apply;
    form._pdpkitReset = function () { srcSelect.value = ""; stSelect.value = ""; apply(); };
    apply();
  }

  // a link to a row (results.html#rw-thm-6) shows it: filters reset if they hide it, details open
  function openTarget(rows) {
    var id = decodeURIComponent(location.hash.slice(1));
    if (!id) return;
    var target = document.getElementById(id);
    var row = rows.find(function (r) { return r.tr === target; });
    if (!row) return;
    var form = document.querySelector("form.pdpkit-results-filters");
    if (row.tr.hidden && form && form._pdpkitReset) form._pdpkitReset();
    setOpen(row.tr, true);
    row.tr.scrollIntoView({block: "start"});
  }

  // an erratum item or a row named by the address: typeset math and late images move it after the browser has
  // scrolled to it, so it is brought back on screen once the page has settled
  function keepTargetInView() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (!el || !el.matches("li.pdpkit-erratum, tr.pdpkit-result")) return;
    var r = el.getBoundingClientRect();
    if (r.top < 0 || r.top > window.innerHeight * 0.5) el.scrollIntoView({block: "start"});
  }

  function settle() {
    keepTargetInView();
    var mj = window.MathJax;
    if (mj && mj.startup && mj.startup.promise) mj.startup.promise.then(keepTargetInView);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
  if (document.readyState === "complete") settle();
  else window.addEventListener("load", settle);
  window.addEventListener("hashchange", keepTargetInView);
})();
